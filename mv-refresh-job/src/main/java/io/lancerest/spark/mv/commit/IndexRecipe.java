package io.lancerest.spark.mv.commit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lancerest.client.LanceJson;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.lance.index.DistanceType;
import org.lance.index.IndexParams;
import org.lance.index.IndexType;
import org.lance.index.vector.HnswBuildParams;
import org.lance.index.vector.IvfBuildParams;
import org.lance.index.vector.PQBuildParams;
import org.lance.index.vector.RQBuildParams;
import org.lance.index.vector.SQBuildParams;
import org.lance.index.vector.VectorIndexParams;

/**
 * How a vector index of a view was built (method, column, WITH options, as our {@code CREATE
 * INDEX ... USING ivf_*} checked them), kept in the view's config under {@link #KEY_PREFIX}
 * {@code <index name>} so that a view commit can build it again where a delta segment will not
 * do: past {@link IndexCarry#MAX_VECTOR_SEGMENTS} segments, or when a commit replacing every row
 * (a full rebuild, a UDTF view's refresh) brings more than twice the rows the index was trained
 * over; a compaction only adds a delta segment. lance-core keeps no such parameters with an
 * index.
 *
 * @param options lower-case option names, values as given (already checked)
 */
public record IndexRecipe(String method, String column, Map<String, String> options) {
  /** View config key prefix; the index name follows. */
  public static final String KEY_PREFIX =
      io.lancerest.spark.mv.indexes.DatasetIndexes.RECIPE_KEY_PREFIX;

  public IndexRecipe {
    options = java.util.Collections.unmodifiableMap(new TreeMap<>(options));
  }

  /** The view config entry that records this recipe for index {@code name}. */
  public Map<String, String> configEntry(String name) {
    ObjectNode n = LanceJson.mapper().createObjectNode();
    n.put("method", method);
    n.put("column", column);
    ObjectNode o = n.putObject("options");
    options.forEach(o::put);
    return Map.of(KEY_PREFIX + name, n.toString());
  }

  /**
   * Records this recipe for index {@code name} in the config of {@code ds}, as a commit that
   * adds this one key: lance-core 4.0.0's {@code Dataset.updateConfig} replaces the whole config,
   * which would drop the view's other keys (DESCRIBE properties, a chunker's state pointer,
   * cleanup policy).
   */
  public void record(org.lance.Dataset ds, String name) {
    try (org.lance.Transaction t = new org.lance.Transaction.Builder().readVersion(ds.version())
            .operation(org.lance.operation.UpdateConfig.builder()
                .upsertValues(configEntry(name)).build()).build();
        org.lance.Dataset done = new org.lance.CommitBuilder(ds).execute(t)) {
      // committed: the key is in the config of the new version
    }
  }

  /** The recipe of index {@code name} in a view's config, or {@code null} (none, unreadable). */
  static IndexRecipe of(Map<String, String> config, String name) {
    String v = config.get(KEY_PREFIX + name);
    if (v == null) {
      return null;
    }
    try {
      JsonNode n = LanceJson.mapper().readTree(v);
      Map<String, String> o = new LinkedHashMap<>();
      n.path("options").fields().forEachRemaining(e -> o.put(e.getKey(), e.getValue().asText()));
      IndexRecipe r = new IndexRecipe(n.path("method").asText(), n.path("column").asText(), o);
      r.type(); // an unknown method is no recipe
      return r;
    } catch (Exception e) { // a recipe written by a newer engine: delta segments only
      return null;
    }
  }

  IndexType type() {
    return switch (method) {
      case "ivf_flat" -> IndexType.IVF_FLAT;
      case "ivf_pq" -> IndexType.IVF_PQ;
      case "ivf_sq" -> IndexType.IVF_SQ;
      case "ivf_rq" -> IndexType.IVF_RQ;
      case "ivf_hnsw_pq" -> IndexType.IVF_HNSW_PQ;
      case "ivf_hnsw_sq" -> IndexType.IVF_HNSW_SQ;
      default -> throw new IllegalArgumentException("unknown vector index method " + method);
    };
  }

  /** lance-core's parameters of this recipe (the options were checked when it was recorded). */
  IndexParams params() {
    IvfBuildParams.Builder ivf = new IvfBuildParams.Builder();
    number("num_partitions", ivf::setNumPartitions);
    number("max_iters", ivf::setMaxIters);
    number("sample_rate", ivf::setSampleRate);
    String metric = options.getOrDefault("metric", options.getOrDefault("distance_type", "l2"))
        .trim().toLowerCase(Locale.ROOT);
    VectorIndexParams.Builder v = new VectorIndexParams.Builder(ivf.build())
        .setDistanceType(switch (metric) {
          case "cosine" -> DistanceType.Cosine;
          case "dot" -> DistanceType.Dot;
          default -> DistanceType.L2;
        });
    if (method.endsWith("_pq")) {
      PQBuildParams.Builder p = new PQBuildParams.Builder();
      number("num_sub_vectors", p::setNumSubVectors);
      number("num_bits", p::setNumBits);
      v.setPqParams(p.build());
    } else if (method.endsWith("_sq")) {
      SQBuildParams.Builder p = new SQBuildParams.Builder();
      number("num_bits", n -> p.setNumBits((short) n));
      v.setSqParams(p.build());
    } else if (method.equals("ivf_rq")) {
      RQBuildParams.Builder p = new RQBuildParams.Builder();
      number("num_bits", n -> p.setNumBits((byte) n));
      v.setRqParams(p.build());
    }
    if (method.contains("hnsw")) {
      HnswBuildParams.Builder h = new HnswBuildParams.Builder();
      number("m", h::setM);
      number("ef_construction", h::setEfConstruction);
      number("max_level", n -> h.setMaxLevel((short) n));
      v.setHnswParams(h.build());
    }
    return IndexParams.builder().setVectorIndexParams(v.build()).build();
  }

  private void number(String key, java.util.function.IntConsumer set) {
    String v = options.get(key);
    if (v != null) {
      set.accept(Integer.parseInt(v.trim()));
    }
  }

  @Override
  public String toString() {
    return method + " (" + column + ")" + (options.isEmpty() ? "" : " WITH " + options);
  }
}
