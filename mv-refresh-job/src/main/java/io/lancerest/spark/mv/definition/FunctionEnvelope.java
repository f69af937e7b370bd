package io.lancerest.spark.mv.definition;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lancerest.spark.mv.error.EnvelopeChecksumException;
import io.lancerest.spark.mv.error.InvalidViewDefinitionException;
import io.lancerest.spark.mv.error.UnsupportedFunctionLanguageException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * The JVM function envelope carried in {@code udtf_spec.udtf}: which class to run and what it
 * produces. Wire form: base64 (RFC 4648, standard alphabet, padded) of the UTF-8 JSON documented
 * in {@code docs/materialized-views.md}; {@code udtf_sha} is the lower-case hex SHA-256 of the
 * <em>decoded bytes</em>, exactly as received: verification never re-serialises, so any client's
 * JSON layout verifies. This class writes the JSON canonically (keys sorted, no whitespace) so
 * that the same envelope always has the same checksum.
 *
 * @param language always {@code java}; other languages are refused on decode
 * @param className a public class with a public no-argument constructor
 * @param name the function's name ({@code udtf_name})
 * @param version the function's version ({@code udtf_version})
 * @param outputSchema the columns the function emits (Arrow JSON, {@code Schema.toJson()})
 * @param inputColumns source columns passed to the function; {@code null} means all
 * @param batch chunkers only: the function takes a batch of rows rather than one row
 * @param options free-form string options from the definition ({@code OPTIONS (...)})
 */
public record FunctionEnvelope(String language, String className, String name, String version,
    Schema outputSchema, List<String> inputColumns, boolean batch, Map<String, String> options) {
  public static final String FORMAT = "lancerest.function.v1";
  public static final String JAVA = "java";

  // Canonical writer: sorted keys, compact; independent of the REST client's mapper settings.
  private static final ObjectMapper CANONICAL = JsonMapper.builder()
      .enable(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS)
      .build();

  public FunctionEnvelope {
    if (!JAVA.equals(language)) {
      throw unsupported(language);
    }
    require(className, "class_name");
    require(name, "name");
    require(version, "version");
    if (outputSchema == null || outputSchema.getFields().isEmpty()) {
      throw new InvalidViewDefinitionException("Function envelope of '" + name
          + "' has no output_schema columns");
    }
    inputColumns = inputColumns == null ? null : List.copyOf(inputColumns);
    options = options == null ? Map.of() : Map.copyOf(new TreeMap<>(options));
  }

  public static FunctionEnvelope java(String className, String name, String version,
      Schema outputSchema, List<String> inputColumns, boolean batch, Map<String, String> options) {
    return new FunctionEnvelope(JAVA, className, name, version, outputSchema, inputColumns, batch,
        options);
  }

  /** The canonical JSON bytes (the ones {@link #sha256Hex()} hashes). */
  public byte[] toJsonBytes() {
    ObjectNode n = CANONICAL.createObjectNode();
    n.put("format", FORMAT);
    n.put("language", language);
    n.put("class_name", className);
    n.put("name", name);
    n.put("version", version);
    try {
      n.set("output_schema", CANONICAL.readTree(outputSchema.toJson()));
    } catch (IOException e) {
      throw new IllegalStateException("Cannot write output schema of '" + name + "'", e);
    }
    if (inputColumns != null) {
      ArrayNode cols = n.putArray("input_columns");
      inputColumns.forEach(cols::add);
    }
    n.put("batch", batch);
    ObjectNode opts = n.putObject("options");
    new TreeMap<>(options).forEach(opts::put);
    try {
      // Sort every object's keys (including inside output_schema) for a stable checksum.
      Object sorted = CANONICAL.treeToValue(n, Object.class);
      return CANONICAL.writeValueAsBytes(sorted);
    } catch (IOException e) {
      throw new IllegalStateException("Cannot write envelope of '" + name + "'", e);
    }
  }

  /** The {@code udtf_spec.udtf} value. */
  public String toBase64() {
    return Base64.getEncoder().encodeToString(toJsonBytes());
  }

  /** The {@code udtf_spec.udtf_sha} value. */
  public String sha256Hex() {
    return sha256Hex(toJsonBytes());
  }

  public static String sha256Hex(byte[] bytes) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is not available", e);
    }
  }

  /**
   * Decodes and verifies {@code udtf_spec.udtf}: the checksum first (over the decoded bytes),
   * then the language, then the fields.
   *
   * @throws EnvelopeChecksumException the SHA-256 does not match {@code expectedSha}
   * @throws UnsupportedFunctionLanguageException the envelope is not for the JVM
   * @throws InvalidViewDefinitionException not base64, not JSON, or a field is missing/invalid
   */
  public static FunctionEnvelope decode(String base64, String expectedSha) {
    if (base64 == null || base64.isBlank()) {
      throw new InvalidViewDefinitionException("udtf_spec.udtf is empty");
    }
    byte[] bytes;
    try {
      bytes = Base64.getDecoder().decode(base64.trim());
    } catch (IllegalArgumentException e) {
      throw new InvalidViewDefinitionException(
          "udtf_spec.udtf is not base64 (standard alphabet): " + e.getMessage(), e);
    }
    String actual = sha256Hex(bytes);
    if (expectedSha == null || !actual.equalsIgnoreCase(expectedSha.trim())) {
      throw new EnvelopeChecksumException("udtf_spec.udtf_sha " + (expectedSha == null
          ? "is missing" : "'" + expectedSha + "' does not match")
          + ": the SHA-256 of the decoded envelope is '" + actual + "'. The envelope was "
          + "altered or the checksum computed over other bytes (it must hash the decoded JSON "
          + "bytes, not the base64 text)");
    }
    return fromJson(bytes);
  }

  /** Parses envelope JSON bytes (no checksum check). */
  public static FunctionEnvelope fromJson(byte[] bytes) {
    JsonNode n;
    try {
      n = CANONICAL.readTree(bytes);
    } catch (IOException e) {
      n = null;
    }
    if (n == null || !n.isObject()) {
      // Geneva ships cloudpickle bytes; protocol 2+ pickles start with 0x80.
      String lang = bytes.length > 0 && (bytes[0] & 0xff) == 0x80 ? "python (pickle)" : "unknown";
      throw unsupported(lang);
    }
    String language = text(n, "language");
    if (language == null) {
      throw unsupported("unknown (no 'language' field)");
    }
    if (!JAVA.equals(language.toLowerCase(Locale.ROOT))) {
      throw unsupported(language);
    }
    String format = text(n, "format");
    if (format != null && !FORMAT.equals(format)) {
      throw new InvalidViewDefinitionException("Function envelope has format '" + format
          + "'; this engine reads '" + FORMAT + "'");
    }
    Schema schema;
    JsonNode s = n.get("output_schema");
    if (s == null || !s.isObject()) {
      throw new InvalidViewDefinitionException("Function envelope of '" + text(n, "name")
          + "' has no output_schema object");
    }
    try {
      schema = Schema.fromJSON(s.toString());
    } catch (IOException | RuntimeException e) {
      throw new InvalidViewDefinitionException("Function envelope of '" + text(n, "name")
          + "' has an output_schema that is not Arrow JSON: " + e.getMessage(), e);
    }
    List<String> inputs = null;
    JsonNode ic = n.get("input_columns");
    if (ic != null && !ic.isNull()) {
      inputs = new ArrayList<>();
      for (JsonNode c : ic) {
        inputs.add(c.asText());
      }
    }
    Map<String, String> options = new TreeMap<>();
    JsonNode o = n.get("options");
    if (o != null && o.isObject()) {
      o.fields().forEachRemaining(e -> options.put(e.getKey(), e.getValue().asText()));
    }
    return new FunctionEnvelope(JAVA, text(n, "class_name"), text(n, "name"),
        text(n, "version"), schema, inputs, n.path("batch").asBoolean(false), options);
  }

  private static String text(JsonNode n, String field) {
    JsonNode v = n.get(field);
    return v == null || v.isNull() ? null : v.asText();
  }

  private static void require(String value, String field) {
    if (value == null || value.isBlank()) {
      throw new InvalidViewDefinitionException("Function envelope has no '" + field + "'");
    }
  }

  private static UnsupportedFunctionLanguageException unsupported(String language) {
    return new UnsupportedFunctionLanguageException(language, "The function envelope is "
        + "written for language '" + language + "', but this engine runs only 'java' functions "
        + "(a class implementing the chunker or UDTF interface). A view defined by Geneva with a "
        + "Python function must be refreshed by Geneva; to refresh it from Spark, re-create it "
        + "with USING CHUNKER/UDTF '<java class>'");
  }

  /** The envelope JSON as text (for DESCRIBE). */
  public String toJson() {
    return new String(toJsonBytes(), StandardCharsets.UTF_8);
  }
}
