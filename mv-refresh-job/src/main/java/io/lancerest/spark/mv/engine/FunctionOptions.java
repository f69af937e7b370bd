package io.lancerest.spark.mv.engine;

import io.lancerest.spark.mv.chunker.ChunkerFunctions;
import io.lancerest.spark.mv.definition.ErrorHandling;
import io.lancerest.spark.mv.definition.FunctionClasses;
import io.lancerest.spark.mv.definition.FunctionEnvelope;
import io.lancerest.spark.mv.definition.FunctionSpec;
import io.lancerest.spark.mv.definition.MaterializedViewKind;
import io.lancerest.spark.mv.error.EnvelopeChecksumException;
import io.lancerest.spark.mv.error.InvalidOptionException;
import io.lancerest.spark.mv.error.InvalidViewDefinitionException;
import io.lancerest.spark.mv.function.BatchChunker;
import io.lancerest.spark.mv.function.BatchUdtf;
import io.lancerest.spark.mv.function.Chunker;
import io.lancerest.spark.mv.layout.VectorColumns;
import io.lancerest.spark.mv.udtf.IvfPartitions;
import io.lancerest.spark.mv.udtf.UdtfResources;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.LanceArrowUtils;

/**
 * The {@code OPTIONS (...)} of a CREATE: which keys are {@code udtf_spec} fields, which steer the
 * view, and which are the function's own options (everything else). Builds and checks the
 * {@link FunctionSpec} of a chunker or UDTF view, including the function's own option check
 * ({@code validate}), which CREATE and every refresh run before anything is written.
 */
final class FunctionOptions {
  /** Keys that are fields of the spec's {@code udtf_spec} (or of the envelope inside it). */
  static final Set<String> UDTF_SPEC_KEYS = Set.of("udtf", "udtf_sha", "udtf_name",
      "udtf_version", "name", "version", "input_columns", "num_cpus", "num_gpus", "memory",
      "error_handling", "batch", "manifest", "manifest_checksum", "output_schema");
  /** Keys about the view itself, valid on every kind. */
  static final String AUTO_REFRESH = "auto_refresh";
  /** A refresh option; accepted at CREATE for the initial refresh of a chunker view. */
  static final String OUTPUT_LIMIT = "output_limit";

  private FunctionOptions() {}

  /** Lower-cased keys, so that {@code INPUT_COLUMNS} and {@code input_columns} are one key. */
  static Map<String, String> normalized(Map<String, String> options) {
    Map<String, String> out = new LinkedHashMap<>();
    options.forEach((k, v) -> {
      if (out.put(k.toLowerCase(Locale.ROOT), v) != null) {
        throw new InvalidOptionException("Option '" + k + "' is given twice");
      }
    });
    return out;
  }

  /** Rejects udtf_spec fields on a query view. */
  static void checkQueryView(Map<String, String> options, String viewName) {
    List<String> spec = options.keySet().stream().filter(UDTF_SPEC_KEYS::contains).sorted()
        .toList();
    if (!spec.isEmpty()) {
      throw new InvalidViewDefinitionException("Query view " + viewName + " cannot have a "
          + "udtf_spec (options " + spec + " describe a function); a query view is a projection "
          + "and filter only. Use USING CHUNKER '<class>' or USING UDTF '<class>' for a "
          + "function view");
    }
    List<String> other = options.keySet().stream().filter(k -> !k.equals(AUTO_REFRESH))
        .filter(k -> !k.equals(OUTPUT_LIMIT)).sorted().toList();
    if (!other.isEmpty()) {
      throw new InvalidOptionException("Unknown option(s) " + other + " for query view "
          + viewName + "; a query view takes only " + AUTO_REFRESH);
    }
  }

  /**
   * The function of a chunker or UDTF view.
   *
   * @param inputSchema the projected source columns (what the function may read)
   */
  static FunctionSpec build(MaterializedViewKind kind, String className, String partitionBy,
      String partitionByIndexed, Map<String, String> options, StructType inputSchema,
      Map<String, Integer> vectorSizes, String viewName) {
    Map<String, String> o = new LinkedHashMap<>(options);
    o.remove(AUTO_REFRESH);
    o.remove(OUTPUT_LIMIT);
    String givenEnvelope = o.remove("udtf");
    String givenSha = o.remove("udtf_sha");
    String name = first(o.remove("udtf_name"), o.remove("name"));
    String version = first(o.remove("udtf_version"), o.remove("version"));
    List<String> inputs = columns(o.remove("input_columns"));
    String batchText = o.remove("batch");
    Boolean batch = batchText == null ? null : bool("batch", batchText);
    UdtfResources res = resources(o.remove("num_cpus"), o.remove("num_gpus"),
        o.remove("memory"));
    String eh = o.remove("error_handling");
    ErrorHandling errorHandling = eh == null ? null : ErrorHandling.fromJson(eh);
    String manifest = o.remove("manifest");
    String manifestChecksum = o.remove("manifest_checksum");
    String outputSchema = o.remove("output_schema");
    Map<String, String> functionOptions = new TreeMap<>(o);

    if (partitionBy != null && partitionByIndexed != null) {
      throw new InvalidViewDefinitionException("View " + viewName + " has both PARTITION BY "
          + partitionBy + " and PARTITION BY INDEXED " + partitionByIndexed + "; give one");
    }
    if (kind == MaterializedViewKind.CHUNKER && (partitionBy != null
        || partitionByIndexed != null)) {
      throw new InvalidViewDefinitionException("PARTITION BY is for UDTF views; chunker view "
          + viewName + " runs its function once per source row");
    }
    for (String p : new String[] {partitionBy, partitionByIndexed}) {
      if (p != null && Arrays.stream(inputSchema.fieldNames()).noneMatch(p::equalsIgnoreCase)) {
        throw new InvalidViewDefinitionException("Partition column '" + p + "' of view "
            + viewName + " is not a column of its SELECT " + List.of(inputSchema.fieldNames()));
      }
    }
    if (inputs != null) {
      for (String c : inputs) {
        if (Arrays.stream(inputSchema.fieldNames()).noneMatch(c::equalsIgnoreCase)) {
          throw new InvalidViewDefinitionException("input_columns names '" + c + "', which is "
              + "not a column of the SELECT of view " + viewName + " "
              + List.of(inputSchema.fieldNames()));
        }
      }
    }

    FunctionEnvelope envelope;
    if (givenEnvelope != null) {
      envelope = FunctionEnvelope.decode(givenEnvelope, givenSha);
      if (!envelope.className().equals(className)) {
        throw new InvalidViewDefinitionException("View " + viewName + " names class '"
            + className + "' in USING but its udtf envelope runs '" + envelope.className() + "'");
      }
      VectorColumns.requireInEnvelope(envelope.outputSchema(), vectorSizes, viewName);
    } else {
      boolean isBatch = batch != null && batch;
      Class<?> cls = checkClass(kind, className, isBatch);
      Object function = newInstance(kind, cls);
      StructType input = functionInput(select(inputSchema, inputs), partitionByIndexed);
      // Before the output schema: a function may derive it from options it has not checked.
      validate(kind, function, functionOptions, input, viewName, "");
      Schema out = VectorColumns.declare(outputSchema != null
          ? parseSchema(outputSchema, viewName)
          : derivedSchema(kind, function, functionOptions, input, viewName), vectorSizes,
          viewName);
      envelope = FunctionEnvelope.java(className, name != null ? name : cls.getSimpleName(),
          version != null ? version : "1", out, inputs, isBatch, functionOptions);
      if (givenSha != null && !envelope.sha256Hex().equalsIgnoreCase(givenSha.trim())) {
        throw new EnvelopeChecksumException("udtf_sha '" + givenSha + "' of view " + viewName
            + " does not match the SHA-256 of its function envelope, '" + envelope.sha256Hex()
            + "': the function's class, name, version, input columns, output schema or options "
            + "differ from the ones the checksum was computed for");
      }
    }
    Class<?> cls = checkClass(kind, envelope.className(), envelope.batch());
    if (givenEnvelope != null) {
      validate(kind, newInstance(kind, cls), envelope.options(), functionInput(
          select(inputSchema, envelope.inputColumns()), partitionByIndexed), viewName, "");
    }
    return new FunctionSpec(kind, envelope, partitionBy, partitionByIndexed,
        res.numCpus(), res.numGpus(), res.memoryBytes(), errorHandling, manifest,
        manifestChecksum);
  }

  /** Loads the class and checks it implements the kind's interface. */
  static Class<?> checkClass(MaterializedViewKind kind, String className, boolean batch) {
    if (kind == MaterializedViewKind.CHUNKER) {
      return ChunkerFunctions.check(className, batch);
    }
    Class<?> cls;
    try {
      cls = FunctionClasses.load(className);
    } catch (ClassNotFoundException | LinkageError e) {
      throw new InvalidViewDefinitionException("UDTF class '" + className + "' cannot be "
          + "loaded (" + e + "); put its jar on the classpath of the driver and the executors "
          + "(spark.jars)", e);
    }
    if (!BatchUdtf.class.isAssignableFrom(cls)) {
      throw new InvalidViewDefinitionException("UDTF class '" + className + "' does not "
          + "implement " + BatchUdtf.class.getName()
          + (Chunker.class.isAssignableFrom(cls) || BatchChunker.class.isAssignableFrom(cls)
              ? " (it is a chunker: use USING CHUNKER)" : ""));
    }
    if (!Modifier.isPublic(cls.getModifiers()) || Modifier.isAbstract(cls.getModifiers())) {
      throw new InvalidViewDefinitionException("UDTF class '" + className + "' must be a "
          + "public, non-abstract class");
    }
    try {
      cls.getConstructor();
    } catch (NoSuchMethodException e) {
      throw new InvalidViewDefinitionException("UDTF class '" + className + "' needs a public "
          + "no-argument constructor", e);
    }
    return cls;
  }

  /**
   * Runs the stored function's own option check ({@code validate}) before a refresh, so that a
   * view whose options were never checked (written by another client) fails with the option's
   * name, not once per source row.
   *
   * @param selected the columns of the view's SELECT over today's source
   */
  static void validateStored(FunctionSpec spec, StructType selected, String viewName) {
    FunctionEnvelope e = spec.envelope();
    Class<?> cls = checkClass(spec.kind(), e.className(), e.batch());
    validate(spec.kind(), newInstance(spec.kind(), cls), e.options(), functionInput(
        select(selected, e.inputColumns()), spec.partitionByIndexedColumn()), viewName,
        ". Nothing was refreshed; recreate the view with valid options (DROP MATERIALIZED VIEW "
            + viewName + ", then CREATE MATERIALIZED VIEW)");
  }

  /**
   * Calls the function's {@code validate}; its error gets the view and the class appended, and
   * then {@code after}. An {@link IllegalArgumentException} (a user function's natural choice) is
   * an option error too.
   */
  private static void validate(MaterializedViewKind kind, Object function,
      Map<String, String> options, StructType input, String viewName, String after) {
    String where = " (view " + viewName + ", " + kind.wire() + " " + function.getClass().getName()
        + ")" + after;
    try {
      if (function instanceof Chunker c) {
        c.validate(options, input);
      } else if (function instanceof BatchChunker b) {
        b.validate(options, input);
      } else {
        ((BatchUdtf) function).validate(input, options);
      }
    } catch (InvalidOptionException e) {
      throw e.withSuffix(where);
    } catch (IllegalArgumentException e) {
      throw new InvalidOptionException(e.getMessage() + where, e);
    }
  }

  /** An instance of a class {@link #checkClass} accepted. */
  private static Object newInstance(MaterializedViewKind kind, Class<?> cls) {
    try {
      return FunctionClasses.newInstance(cls);
    } catch (InvocationTargetException e) {
      throw new InvalidViewDefinitionException(kind.wire() + " class '" + cls.getName()
          + "' failed in its constructor: " + e.getCause(), e.getCause());
    } catch (FunctionClasses.InitializerFailedException e) {
      throw new InvalidViewDefinitionException(kind.wire() + " class '" + cls.getName()
          + "' " + e.getMessage(), e.getCause());
    } catch (ReflectiveOperationException e) {
      throw new InvalidViewDefinitionException("Cannot create " + kind.wire() + " '"
          + cls.getName() + "': " + e, e);
    }
  }

  private static Schema derivedSchema(MaterializedViewKind kind, Object f,
      Map<String, String> options, StructType input, String viewName) {
    StructType out;
    if (f instanceof Chunker c) {
      out = c.outputSchema(options, input);
    } else if (f instanceof BatchChunker b) {
      out = b.outputSchema(options, input);
    } else {
      out = ((BatchUdtf) f).outputSchema(input, options);
    }
    Class<?> cls = f.getClass();
    if (out == null) {
      throw new InvalidViewDefinitionException(kind.wire() + " '" + cls.getName() + "' of view "
          + viewName + " does not tell its output schema; declare it with OPTIONS "
          + "(output_schema = 'col1 TYPE, col2 TYPE')");
    }
    return LanceArrowUtils.toArrowSchema(out, "UTC", true);
  }

  /** Spark DDL ({@code a string, b int}) or Arrow JSON ({@code {"fields": [...]}}). */
  static Schema parseSchema(String text, String viewName) {
    String t = text.trim();
    try {
      if (t.startsWith("{")) {
        return Schema.fromJSON(t);
      }
      return LanceArrowUtils.toArrowSchema(StructType.fromDDL(t), "UTC", true);
    } catch (Exception e) {
      throw new InvalidViewDefinitionException("output_schema of view " + viewName + " is "
          + "neither Spark DDL ('a STRING, b INT') nor Arrow JSON: " + e.getMessage(), e);
    }
  }

  /**
   * What the function is handed per row: the selected columns, plus the constant {@code
   * _partition_id int32} that a PARTITION BY INDEXED refresh adds (so a UDTF deriving its output
   * schema from its input sees the column it will be given).
   */
  private static StructType functionInput(StructType selected, String partitionByIndexed) {
    if (partitionByIndexed == null) {
      return selected;
    }
    return selected.add(new StructField(IvfPartitions.PARTITION_ID, DataTypes.IntegerType,
        false, Metadata.empty()));
  }

  private static StructType select(StructType schema, List<String> columns) {
    if (columns == null) {
      return schema;
    }
    List<StructField> out = new ArrayList<>();
    for (String c : columns) {
      for (StructField f : schema.fields()) {
        if (f.name().equalsIgnoreCase(c)) {
          out.add(f);
        }
      }
    }
    return new StructType(out.toArray(StructField[]::new));
  }

  private static UdtfResources resources(String cpus, String gpus, String memory) {
    try {
      return UdtfResources.of(cpus, gpus, memory);
    } catch (IllegalArgumentException e) {
      throw new InvalidOptionException(e.getMessage());
    }
  }

  static List<String> columns(String text) {
    if (text == null) {
      return null;
    }
    List<String> out = new ArrayList<>();
    for (String p : text.split(",")) {
      if (!p.isBlank()) {
        out.add(p.trim());
      }
    }
    return out;
  }

  static boolean bool(String key, String v) {
    String t = v.trim().toLowerCase(Locale.ROOT);
    if (!t.equals("true") && !t.equals("false")) {
      throw new InvalidOptionException(key, v, "true or false");
    }
    return t.equals("true");
  }

  private static String first(String a, String b) {
    return a != null ? a : b;
  }
}
