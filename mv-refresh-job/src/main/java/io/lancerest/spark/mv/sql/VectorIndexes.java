package io.lancerest.spark.mv.sql;

import io.lancerest.spark.mv.error.InvalidOptionException;
import io.lancerest.spark.mv.error.MaterializedViewException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.analysis.NoSuchTableException;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.lance.Dataset;
import org.lance.index.DistanceType;
import org.lance.index.Index;
import org.lance.index.IndexParams;
import org.lance.index.IndexType;
import org.lance.index.scalar.ScalarIndexParams;
import org.lance.index.vector.HnswBuildParams;
import org.lance.index.vector.IvfBuildParams;
import org.lance.index.vector.PQBuildParams;
import org.lance.index.vector.RQBuildParams;
import org.lance.index.vector.SQBuildParams;
import org.lance.index.vector.VectorIndexParams;
import org.lance.spark.LanceDataset;
import org.lance.spark.utils.Utils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code ALTER TABLE t CREATE INDEX name USING <method> (col) [WITH (...)]} for the methods
 * lance-spark 0.4.0's own CREATE INDEX lacks (it builds btree and fts only, and answers {@code
 * Unsupported index method: ivf_flat}): the vector methods and the scalar {@code bitmap}. Built
 * on the driver with lance-core's {@code Dataset.createIndex}, which (for a vector method) trains
 * the IVF centroids and writes the index in one commit.
 *
 * <p>The dataset is opened from the read options of the catalog's own table, loaded afresh (so
 * with newly vended credentials, and through the namespace for tables with managed versioning),
 * exactly as lance-spark's CREATE INDEX opens it; an index of the same name is replaced, as
 * lance-spark's does. The catalog's cached table is dropped afterwards, so the next statement
 * reads the new version.
 */
public final class VectorIndexes {
  private static final Logger LOG = LoggerFactory.getLogger(VectorIndexes.class);

  /** The scalar method built here (lance-spark 0.4.0 builds btree and fts only). */
  private static final String BITMAP = "bitmap";

  /** The index methods built here, as written after USING, with lance-core's types. */
  static final Map<String, IndexType> METHODS = methods();

  /** Columns of the result row: those of lance-spark's CREATE INDEX. */
  public static final StructType OUTPUT = new StructType()
      .add("fragments_indexed", DataTypes.LongType, false)
      .add("index_name", DataTypes.StringType, false);

  private static final Set<String> IVF_OPTIONS = Set.of("num_partitions", "max_iters",
      "sample_rate", "metric", "distance_type");
  private static final Set<String> PQ_OPTIONS = Set.of("num_sub_vectors", "num_bits");
  private static final Set<String> BITS_OPTIONS = Set.of("num_bits");
  private static final Set<String> HNSW_OPTIONS = Set.of("m", "ef_construction", "max_level");
  private static final String POSITIVE = "a positive whole number";

  private VectorIndexes() {}

  private static Map<String, IndexType> methods() {
    Map<String, IndexType> m = new LinkedHashMap<>();
    m.put("ivf_flat", IndexType.IVF_FLAT);
    m.put("ivf_pq", IndexType.IVF_PQ);
    m.put("ivf_sq", IndexType.IVF_SQ);
    m.put("ivf_rq", IndexType.IVF_RQ);
    m.put("ivf_hnsw_pq", IndexType.IVF_HNSW_PQ);
    m.put("ivf_hnsw_sq", IndexType.IVF_HNSW_SQ);
    m.put(BITMAP, IndexType.BITMAP);
    return java.util.Collections.unmodifiableMap(m);
  }

  /**
   * Whether a method name after USING is ours: bitmap, or one that reads as a vector index method
   * (ours to build, or to refuse with the list of those we build); every other name is
   * lance-spark's.
   */
  static boolean isOurMethod(String method) {
    String m = method.toLowerCase(Locale.ROOT);
    return m.startsWith("ivf") || m.startsWith("hnsw") || m.equals("vector") || m.equals(BITMAP);
  }

  /** What an unknown method of ours is told to use instead. */
  static String supportedMethods() {
    return String.join(", ", METHODS.keySet());
  }

  /** Runs the statement; one row (fragments indexed, index name), as lance-spark's. */
  static List<Row> create(SparkSession spark, MvStatement.CreateVectorIndex s) {
    CatalogLanceTable target = CatalogLanceTable.resolve(spark, s.table());
    String table = target.display();
    String what = "CREATE INDEX " + s.indexName() + " USING " + s.method() + " (" + s.column()
        + ") on " + table;
    Spec spec = Spec.of(what, s.method(), s.options());
    LanceDataset lance;
    try {
      lance = target.load(spark, what,
          (spec.scalar() ? "bitmap" : "vector") + " indexes are built on Lance datasets only");
    } catch (NoSuchTableException e) {
      throw new MaterializedViewException("Table " + table + " does not exist: create it, or "
          + "name an existing table in CREATE INDEX", e);
    }
    long fragments;
    try (Dataset ds = Utils.openDataset(lance.readOptions())) {
      if (spec.scalar()) {
        column(table, s, ds);
      } else {
        spec.checkDimension(vectorDimension(table, s, ds, lance.schema()));
      }
      Index index;
      try {
        index = ds.createIndex(List.of(s.column()), spec.type(), Optional.of(s.indexName()),
            spec.params(), true);
      } catch (RuntimeException e) {
        throw new MaterializedViewException("Cannot build the " + s.method() + " index '"
            + s.indexName() + "' on column '" + s.column() + "' of table " + table + ": "
            + lanceMessage(e) + ". " + (spec.scalar() ? "Index a column of a type lance-core "
            + "can build it on" : "Change the WITH options (or add rows)")
            + ", then run CREATE INDEX again", e);
      }
      fragments = index.fragments().map(List::size).orElseGet(() -> ds.getFragments().size());
      if (!spec.scalar()) {
        recordRecipe(ds, table, s); // scalar indexes are merged, never built again
      }
    } finally {
      target.invalidate(spark);
    }
    LOG.info("Built {} index {} on {} ({}), {} fragments indexed", s.method(), s.indexName(),
        table, s.column(), fragments);
    return List.of(RowFactory.create(fragments, s.indexName()));
  }

  /** The column to index, else an error naming the table's columns. */
  private static Field column(String table, MvStatement.CreateVectorIndex s, Dataset ds) {
    List<String> columns = new ArrayList<>();
    for (Field f : ds.getSchema().getFields()) {
      if (f.getName().equals(s.column())) {
        return f;
      }
      columns.add(f.getName());
    }
    throw new MaterializedViewException("Table " + table + " has no column '" + s.column()
        + "' to index; its columns are " + columns);
  }

  /**
   * On a materialized view, keeps how a vector index was built in the view's config: a view
   * commit builds it again from this recipe past the delta-segment bound, or when a commit
   * replacing every row brings more than twice the rows the index was trained over.
   */
  private static void recordRecipe(Dataset ds, String table, MvStatement.CreateVectorIndex s) {
    Map<String, String> meta = ds.getSchema().getCustomMetadata();
    if (meta == null || !io.lancerest.spark.mv.layout.GenevaLayout.isMaterializedView(meta)) {
      return;
    }
    Map<String, String> options = new LinkedHashMap<>();
    s.options().forEach((k, v) -> options.put(k.toLowerCase(Locale.ROOT), v));
    try {
      new io.lancerest.spark.mv.commit.IndexRecipe(s.method(), s.column(), options)
          .record(ds, s.indexName());
    } catch (RuntimeException e) {
      LOG.warn("Index {} on view {} was built, but its recipe was not recorded ({}): the view's "
          + "refreshes add new rows to it as delta segments and never build it again",
          s.indexName(), table, lanceMessage(e));
    }
  }

  /** The vector length of the column: a fixed-size list of floats, else a clear error. */
  private static int vectorDimension(String table, MvStatement.CreateVectorIndex s, Dataset ds,
      StructType sparkSchema) {
    Field field = column(table, s, ds);
    if (field.getType() instanceof ArrowType.FixedSizeList list
        && field.getChildren().size() == 1
        && field.getChildren().get(0).getType() instanceof ArrowType.FloatingPoint) {
      return list.getListSize();
    }
    String type = java.util.Arrays.stream(sparkSchema.fields())
        .filter(f -> f.name().equals(s.column())).map(f -> f.dataType().sql()).findFirst()
        .orElse(String.valueOf(field.getType()));
    if (field.getType() instanceof ArrowType.List) {
      type += " without a fixed size";
    }
    Map<String, String> meta = ds.getSchema().getCustomMetadata();
    boolean view = meta != null
        && io.lancerest.spark.mv.layout.GenevaLayout.isMaterializedView(meta);
    String property = "'" + s.column() + ".arrow.fixed-size-list.size' = '<dimension>'";
    throw new MaterializedViewException("Column '" + s.column() + "' of "
        + (view ? "materialized view " : "table ") + table + " is " + type + ", not a vector: "
        + "an " + s.method() + " index needs a fixed-size list of floats. Index a vector "
        + "column, or " + (view ? "re-create the view with TBLPROPERTIES (" + property
            + ") if its SELECT computes this column (a vector column of the source keeps its "
            + "size in the view)"
            : "create the table with this one as ARRAY<FLOAT> and TBLPROPERTIES (" + property
            + ")"));
  }

  /** lance-core's message without the Rust source location it ends with. */
  private static String lanceMessage(RuntimeException e) {
    String m = String.valueOf(e.getMessage());
    return m.replaceFirst(",\\s*\\S+\\.rs:\\d+:\\d+\\s*$", "");
  }

  /**
   * The index type and lance-core parameters of a method and its WITH options, checked before
   * anything is opened.
   */
  record Spec(String what, String method, IndexType type, IndexParams params,
      Integer numSubVectors) {

    static Spec of(String what, String method, Map<String, String> given) {
      IndexType type = METHODS.get(method);
      if (type == null) {
        throw new MaterializedViewException(what + ": unknown index method '" + method
            + "'; use one of " + supportedMethods());
      }
      if (type == IndexType.BITMAP) {
        if (!given.isEmpty()) {
          throw new InvalidOptionException(what + ": bitmap has no options; remove WITH ("
              + String.join(", ", given.keySet()) + ")");
        }
        return new Spec(what, method, type, IndexParams.builder()
            .setScalarIndexParams(ScalarIndexParams.create(BITMAP)).build(), null);
      }
      boolean pq = method.endsWith("_pq");
      boolean sq = method.endsWith("_sq");
      boolean rq = method.equals("ivf_rq");
      boolean hnsw = method.contains("hnsw");
      Set<String> known = new java.util.TreeSet<>(IVF_OPTIONS);
      if (pq) {
        known.addAll(PQ_OPTIONS);
      }
      if (sq || rq) {
        known.addAll(BITS_OPTIONS);
      }
      if (hnsw) {
        known.addAll(HNSW_OPTIONS);
      }
      Map<String, String> o = new LinkedHashMap<>();
      for (Map.Entry<String, String> e : given.entrySet()) {
        String key = e.getKey().toLowerCase(Locale.ROOT);
        if (o.put(key, e.getValue()) != null) {
          throw new InvalidOptionException(what + ": option '" + key + "' is given twice");
        }
      }
      List<String> unknown = o.keySet().stream().filter(k -> !known.contains(k)).sorted()
          .toList();
      if (!unknown.isEmpty()) {
        throw new InvalidOptionException(what + ": " + method + " has no option"
            + (unknown.size() > 1 ? "s " : " ") + String.join(", ", unknown.stream()
                .map(k -> "'" + k + "'").toList()) + "; its options are "
            + String.join(", ", known));
      }
      if (o.containsKey("metric") && o.containsKey("distance_type")) {
        throw new InvalidOptionException(what + ": give the distance as metric or as "
            + "distance_type, not both");
      }
      String metric = o.getOrDefault("metric", o.getOrDefault("distance_type", "l2"));
      DistanceType distance = switch (metric.trim().toLowerCase(Locale.ROOT)) {
        case "l2", "euclidean" -> DistanceType.L2;
        case "cosine" -> DistanceType.Cosine;
        case "dot" -> DistanceType.Dot;
        default -> throw new InvalidOptionException(option(what, o, "metric", "distance_type"),
            metric, "'l2', 'cosine' or 'dot'");
      };
      IvfBuildParams.Builder ivf = new IvfBuildParams.Builder();
      Integer partitions = number(what, o, "num_partitions");
      if (partitions != null) {
        ivf.setNumPartitions(partitions);
      }
      Integer iters = number(what, o, "max_iters");
      if (iters != null) {
        ivf.setMaxIters(iters);
      }
      Integer sample = number(what, o, "sample_rate");
      if (sample != null) {
        ivf.setSampleRate(sample);
      }
      VectorIndexParams.Builder v = new VectorIndexParams.Builder(ivf.build())
          .setDistanceType(distance);
      Integer bits = number(what, o, "num_bits");
      Integer subVectors = null;
      if (pq) {
        PQBuildParams.Builder p = new PQBuildParams.Builder();
        subVectors = number(what, o, "num_sub_vectors");
        if (subVectors != null) {
          p.setNumSubVectors(subVectors);
        }
        if (bits != null) {
          p.setNumBits(bits);
        }
        v.setPqParams(p.build());
      }
      if (sq) {
        SQBuildParams.Builder p = new SQBuildParams.Builder();
        if (bits != null) {
          p.setNumBits(at(what, "num_bits", bits, Short.MAX_VALUE).shortValue());
        }
        v.setSqParams(p.build());
      }
      if (rq) {
        RQBuildParams.Builder p = new RQBuildParams.Builder();
        if (bits != null) {
          p.setNumBits(at(what, "num_bits", bits, Byte.MAX_VALUE).byteValue());
        }
        v.setRqParams(p.build());
      }
      if (hnsw) {
        HnswBuildParams.Builder h = new HnswBuildParams.Builder();
        Integer m = number(what, o, "m");
        if (m != null) {
          h.setM(m);
        }
        Integer ef = number(what, o, "ef_construction");
        if (ef != null) {
          h.setEfConstruction(ef);
        }
        Integer level = number(what, o, "max_level");
        if (level != null) {
          h.setMaxLevel(at(what, "max_level", level, Short.MAX_VALUE).shortValue());
        }
        v.setHnswParams(h.build());
      }
      IndexParams params = IndexParams.builder().setVectorIndexParams(v.build()).build();
      return new Spec(what, method, type, params, subVectors);
    }

    /** A scalar index (bitmap): any column lance-core indexes, no vector checks. */
    boolean scalar() {
      return type == IndexType.BITMAP;
    }

    /** PQ splits each vector into equal sub-vectors: their number must divide the length. */
    void checkDimension(int dimension) {
      if (type != IndexType.IVF_PQ && type != IndexType.IVF_HNSW_PQ) {
        return;
      }
      int sub = numSubVectors == null ? 16 : numSubVectors; // lance-core's default
      if (dimension % sub != 0) {
        throw new InvalidOptionException(what + ": num_sub_vectors must divide the vector "
            + "length " + dimension + ", got " + sub + (numSubVectors == null ? " (the default)"
            : "") + "; set WITH (num_sub_vectors = n) to a divisor of " + dimension);
      }
    }

    private static Integer number(String what, Map<String, String> o, String key) {
      String v = o.get(key);
      if (v == null) {
        return null;
      }
      try {
        int n = Integer.parseInt(v.trim());
        if (n >= 1) {
          return n;
        }
      } catch (NumberFormatException e) {
        // reported below
      }
      throw new InvalidOptionException(what + ": " + key, v, POSITIVE);
    }

    /** {@code n}, refused above {@code max} (the parameter is narrower than an int). */
    private static Integer at(String what, String key, Integer n, int max) {
      if (n > max) {
        throw new InvalidOptionException(what + ": " + key, Integer.toString(n),
            "a whole number of at most " + max + " (the largest lance-core's parameter holds; "
            + "lance-core checks the method's own range)");
      }
      return n;
    }

    private static String option(String what, Map<String, String> o, String a, String b) {
      return what + ": " + (o.containsKey(a) ? a : b);
    }
  }
}
