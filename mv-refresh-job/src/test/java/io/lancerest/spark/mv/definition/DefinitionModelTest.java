package io.lancerest.spark.mv.definition;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.client.model.MaterializedViewUdtfEntry;
import io.lancerest.spark.mv.error.EnvelopeChecksumException;
import io.lancerest.spark.mv.error.InvalidViewDefinitionException;
import io.lancerest.spark.mv.error.MaterializedViewException;
import io.lancerest.spark.mv.error.UnsupportedFunctionLanguageException;
import io.lancerest.spark.mv.layout.GenevaLayout;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.Test;

class DefinitionModelTest {
  static final Schema CHUNK_SCHEMA = new Schema(List.of(
      new Field("chunk", FieldType.nullable(ArrowType.Utf8.INSTANCE), null),
      new Field("pos", FieldType.notNullable(new ArrowType.Int(32, true)), null)));

  static FunctionEnvelope chunker() {
    return FunctionEnvelope.java("com.example.Split", "split", "1.0", CHUNK_SCHEMA,
        List.of("text"), false, Map.of("size", "200", "overlap", "20"));
  }

  static SourceQuery query() {
    return SourceQuery.of(List.of("ns", "docs"), List.of("ns"),
        List.of(new SourceQuery.OutputColumn("id", "id"),
            new SourceQuery.OutputColumn("title_uc", "upper(title)")),
        "lang = 'en'", 1000L);
  }

  // ---------------------------------------------------------------- kind

  @Test
  void kindsReadTheSpecNamesAndTheLegacyScalarUdtfAlias() {
    assertEquals(MaterializedViewKind.CHUNKER, MaterializedViewKind.fromWire("scalar_udtf"));
    assertEquals(MaterializedViewKind.UDTF, MaterializedViewKind.fromWire("UDTF"));
    assertEquals(MaterializedViewKind.QUERY, MaterializedViewKind.fromGenevaVersion("2"));
    assertEquals(MaterializedViewKind.CHUNKER, MaterializedViewKind.fromGenevaVersion("chunker"));
    InvalidViewDefinitionException e = assertThrows(InvalidViewDefinitionException.class,
        () -> MaterializedViewKind.fromWire("matview"));
    assertEquals("Unknown materialized view kind 'matview'; expected query, udtf or chunker "
        + "(scalar_udtf is read as chunker)", e.getMessage());
  }

  // ---------------------------------------------------------------- source_query

  @Test
  void sourceQueryJsonIsTheDocumentedShapeAndRoundTrips() {
    String json = query().toJson();
    assertEquals("{\"format\":\"lancerest.source_query.v1\",\"dialect\":\"spark-sql\","
        + "\"source_table_id\":[\"ns\",\"docs\"],\"source_namespace\":[\"ns\"],"
        + "\"projection\":[{\"name\":\"id\",\"expr\":\"id\"},"
        + "{\"name\":\"title_uc\",\"expr\":\"upper(title)\"}],"
        + "\"filter\":\"lang = 'en'\",\"limit\":1000}", json);
    assertEquals(query(), SourceQuery.fromJson(json));
  }

  @Test
  void sourceQueryRejectsOtherFormatsDuplicatesAndForeignJson() {
    assertEquals("source_query has format 'lancerest.source_query.v9'; this engine reads "
        + "'lancerest.source_query.v1' and 'lancerest.source_query.v2'. The view was defined by "
        + "another client; upgrade this one or re-create the view", assertThrows(InvalidViewDefinitionException.class,
            () -> SourceQuery.fromJson("{\"format\":\"lancerest.source_query.v9\","
                + "\"source_table_id\":[\"t\"]}")).getMessage());
    assertEquals("source_query projection has two columns named 'A'; give one of them an alias",
        assertThrows(InvalidViewDefinitionException.class, () -> SourceQuery.of(List.of("t"),
            null, List.of(new SourceQuery.OutputColumn("a", "x"),
                new SourceQuery.OutputColumn("A", "y")), null, null)).getMessage());
    assertTrue(assertThrows(InvalidViewDefinitionException.class,
        () -> SourceQuery.fromJson("{\"select\":[\"a\"],\"table\":\"t\"}")).getMessage()
        .startsWith("source_query has no 'format' field, so it was not written by this engine"));
    assertEquals("source_query has no source_table_id",
        assertThrows(InvalidViewDefinitionException.class, () -> SourceQuery.fromJson(
            "{\"format\":\"lancerest.source_query.v1\"}")).getMessage());
  }

  // ---------------------------------------------------------------- envelope

  @Test
  void envelopeShaIsTheSha256OfTheDecodedJsonBytes() throws Exception {
    FunctionEnvelope env = chunker();
    byte[] bytes = Base64.getDecoder().decode(env.toBase64());
    assertEquals(FunctionEnvelope.sha256Hex(bytes), env.sha256Hex());
    String json = new String(bytes, StandardCharsets.UTF_8);
    assertTrue(json.startsWith("{\"batch\":false,\"class_name\":\"com.example.Split\","
        + "\"format\":\"lancerest.function.v1\",\"input_columns\":[\"text\"],"
        + "\"language\":\"java\",\"name\":\"split\",\"options\":{\"overlap\":\"20\","
        + "\"size\":\"200\"},\"output_schema\":{"), json);
    assertEquals(64, env.sha256Hex().length());
    assertEquals(env, FunctionEnvelope.decode(env.toBase64(), env.sha256Hex()));
    // Same envelope, same bytes: the checksum is stable.
    assertEquals(env.sha256Hex(), chunker().sha256Hex());
  }

  @Test
  void envelopeWrittenByAnotherClientVerifiesOverItsOwnBytes() {
    String json = "{ \"language\": \"java\", \"class_name\": \"com.example.Split\", "
        + "\"name\": \"split\", \"version\": \"1.0\", \"output_schema\": "
        + CHUNK_SCHEMA.toJson() + " }";
    byte[] bytes = json.getBytes(StandardCharsets.UTF_8);
    FunctionEnvelope env = FunctionEnvelope.decode(Base64.getEncoder().encodeToString(bytes),
        FunctionEnvelope.sha256Hex(bytes).toUpperCase());
    assertEquals("com.example.Split", env.className());
    assertNull(env.inputColumns());
    assertEquals(CHUNK_SCHEMA, env.outputSchema());
  }

  @Test
  void alteredEnvelopeFailsTheChecksum() {
    FunctionEnvelope env = chunker();
    String other = FunctionEnvelope.java("com.example.Evil", "split", "1.0", CHUNK_SCHEMA, null,
        false, Map.of()).toBase64();
    EnvelopeChecksumException e = assertThrows(EnvelopeChecksumException.class,
        () -> FunctionEnvelope.decode(other, env.sha256Hex()));
    assertTrue(e.getMessage().startsWith("udtf_spec.udtf_sha '" + env.sha256Hex()
        + "' does not match: the SHA-256 of the decoded envelope is '"), e.getMessage());
    // Hashing the base64 text instead of the decoded bytes is the classic mistake.
    String b64 = env.toBase64();
    assertThrows(EnvelopeChecksumException.class, () -> FunctionEnvelope.decode(b64,
        FunctionEnvelope.sha256Hex(b64.getBytes(StandardCharsets.US_ASCII))));
  }

  @Test
  void envelopesForOtherRuntimesAreRefusedNamingTheLanguage() {
    byte[] pickle = {(byte) 0x80, 0x05, (byte) 0x95, 0x10, 0, 0};
    UnsupportedFunctionLanguageException e = assertThrows(
        UnsupportedFunctionLanguageException.class, () -> FunctionEnvelope.decode(
            Base64.getEncoder().encodeToString(pickle), FunctionEnvelope.sha256Hex(pickle)));
    assertEquals("python (pickle)", e.language());
    assertTrue(e.getMessage().startsWith("The function envelope is written for language "
        + "'python (pickle)', but this engine runs only 'java' functions"), e.getMessage());

    byte[] py = "{\"language\":\"python\",\"udtf\":\"gASV...\"}".getBytes(StandardCharsets.UTF_8);
    assertEquals("python", assertThrows(UnsupportedFunctionLanguageException.class,
        () -> FunctionEnvelope.decode(Base64.getEncoder().encodeToString(py),
            FunctionEnvelope.sha256Hex(py))).language());
  }

  @Test
  void notBase64IsAClearError() {
    assertTrue(assertThrows(InvalidViewDefinitionException.class,
        () -> FunctionEnvelope.decode("%%%", "00")).getMessage()
        .startsWith("udtf_spec.udtf is not base64 (standard alphabet): "));
  }

  // ---------------------------------------------------------------- udtf_spec

  @Test
  void wireEntryRoundTripsAndMustAgreeWithTheEnvelope() {
    FunctionSpec spec = new FunctionSpec(MaterializedViewKind.CHUNKER, chunker(), null, null,
        2.0, null, 3L << 30, null, null, null);
    MaterializedViewUdtfEntry wire = spec.toWire();
    assertEquals("chunker", wire.getKind().getValue());
    assertEquals(chunker().sha256Hex(), wire.getUdtfSha());
    assertEquals(3L << 30, wire.getMemory()); // ≥ 2 GiB stays 64-bit
    assertEquals(spec, FunctionSpec.fromWire(MaterializedViewKind.CHUNKER, wire));

    MaterializedViewUdtfEntry renamed = new MaterializedViewUdtfEntry().kind(wire.getKind())
        .udtf(wire.getUdtf()).udtfSha(wire.getUdtfSha()).udtfName("other")
        .udtfVersion(wire.getUdtfVersion());
    assertEquals("udtf_spec.udtf_name is other but the envelope says split; they must agree",
        assertThrows(InvalidViewDefinitionException.class,
            () -> FunctionSpec.fromWire(MaterializedViewKind.CHUNKER, renamed)).getMessage());
    assertEquals("udtf_spec.kind 'chunker' does not match the view kind 'udtf'",
        assertThrows(InvalidViewDefinitionException.class,
            () -> FunctionSpec.fromWire(MaterializedViewKind.UDTF, wire)).getMessage());
  }

  @Test
  void definitionRulesOnKindsAndPartitions() {
    FunctionSpec spec = FunctionSpec.of(MaterializedViewKind.CHUNKER, chunker());
    assertEquals("View ns.v is a query view and cannot have a udtf_spec; use USING CHUNKER or "
        + "USING UDTF for a function view", assertThrows(InvalidViewDefinitionException.class,
            () -> new ViewDefinition(List.of("ns", "v"), MaterializedViewKind.QUERY, query(),
                spec, false)).getMessage());
    assertEquals("PARTITION BY and PARTITION BY INDEXED are exclusive (partition_by = 'a', "
        + "partition_by_indexed_column = 'b'); give one of them",
        assertThrows(InvalidViewDefinitionException.class, () -> new FunctionSpec(
            MaterializedViewKind.UDTF, FunctionEnvelope.java("C", "n", "1", CHUNK_SCHEMA, null,
                false, null), "a", "b", null, null, null, null, null, null)).getMessage());
  }

  // ---------------------------------------------------------------- error_handling

  @Test
  void errorHandlingRetriesThenFallsThroughToSkipAndDefaultsToFail() {
    ErrorHandling eh = ErrorHandling.fromJson("{\"format\":\"lancerest.error_handling.v1\","
        + "\"rules\":[{\"match\":\"IOException|timed out\",\"action\":\"retry\","
        + "\"max_attempts\":3,\"backoff\":\"exponential\",\"initial_backoff_ms\":100,"
        + "\"max_backoff_ms\":300},{\"match\":\"IOException\",\"action\":\"SKIP\"}],"
        + "\"max_skip_count\":2,\"max_skip_fraction\":0.5}");
    RuntimeException io = new RuntimeException("wrapped", new java.io.IOException("reset"));
    assertEquals(new ErrorHandling.Decision(ErrorHandling.Action.RETRY, 100), eh.decide(io, 1));
    assertEquals(new ErrorHandling.Decision(ErrorHandling.Action.RETRY, 200), eh.decide(io, 2));
    assertEquals(new ErrorHandling.Decision(ErrorHandling.Action.SKIP, 0), eh.decide(io, 3));
    RuntimeException timeout = new RuntimeException("call timed out");
    assertEquals(ErrorHandling.Action.FAIL, eh.decide(timeout, 3).action());
    assertEquals(ErrorHandling.Action.FAIL, eh.decide(new IllegalStateException("x"), 1).action());
    assertEquals(ErrorHandling.FaultIsolation.SKIP_ROWS, eh.faultIsolation());
    assertEquals(eh, ErrorHandling.fromJson(eh.toJson()));
    assertTrue(eh.toJson().contains("\"action\":\"retry\""), eh.toJson());

    eh.checkSkips(2, 100, "parent rows");
    assertEquals("3 parent rows were skipped, more than error_handling.max_skip_count = 2; the "
        + "refresh committed nothing", assertThrows(MaterializedViewException.class,
            () -> eh.checkSkips(3, 100, "parent rows")).getMessage());
    assertEquals("2 of 3 partitions were skipped (0.6667), more than "
        + "error_handling.max_skip_fraction = 0.5; the refresh committed nothing",
        assertThrows(MaterializedViewException.class,
            () -> eh.checkSkips(2, 3, "partitions")).getMessage());
  }

  @Test
  void backoffKindsAndCaps() {
    ErrorHandling.Rule lin = ErrorHandling.Rule.retry(null, 10, ErrorHandling.Backoff.LINEAR, 50,
        120);
    ErrorHandling.Rule fixed = ErrorHandling.Rule.retry(null, 10, ErrorHandling.Backoff.FIXED, 50,
        120);
    ErrorHandling.Rule exp = ErrorHandling.Rule.retry(null, 100,
        ErrorHandling.Backoff.EXPONENTIAL, 50, 1000);
    assertEquals(List.of(50L, 100L, 120L), List.of(lin.delayMs(1), lin.delayMs(2), lin.delayMs(3)));
    assertEquals(50L, fixed.delayMs(7));
    assertEquals(1000L, exp.delayMs(70)); // no overflow
  }

  @Test
  void errorHandlingRejectsBadValues() {
    assertEquals("error_handling 'action' is 'ignore'; expected one of [retry, skip, fail]",
        assertThrows(InvalidViewDefinitionException.class, () -> ErrorHandling.fromJson(
            "{\"format\":\"lancerest.error_handling.v1\",\"rules\":[{\"action\":\"ignore\"}]}"))
            .getMessage());
    assertTrue(assertThrows(InvalidViewDefinitionException.class, () -> ErrorHandling.fromJson(
        "{\"rules\":[{\"action\":\"skip\",\"match\":\"(\"}]}")).getMessage()
        .startsWith("error_handling rule has an invalid 'match' regex '(': "));
    assertEquals("error_handling max_skip_fraction must be between 0 and 1, got 1.5",
        assertThrows(InvalidViewDefinitionException.class, () -> ErrorHandling.fromJson(
            "{\"max_skip_fraction\":1.5}")).getMessage());
    assertEquals(ErrorHandling.FAIL, ErrorHandling.fromWire(null));
    assertEquals(ErrorHandling.Action.SKIP, ErrorHandling.fromWire(Map.of("rules",
        List.of(Map.of("action", "skip")))).decide(new RuntimeException(), 1).action());
  }

  // ---------------------------------------------------------------- Geneva layout

  @Test
  void queryViewRoundTripsThroughGenevaMetadataWithTheWatermarkOnSourceRowId() {
    ViewDefinition d = new ViewDefinition(List.of("ns", "v"), MaterializedViewKind.QUERY,
        query(), null, false);
    GenevaLayout.Metadata md = GenevaLayout.encode(d, new ViewState(12L, 12L, null),
        "http://h:2333");
    assertEquals("2", md.schema().get("geneva::view::version"));
    assertEquals("docs", md.schema().get("geneva::view::base_table"));
    assertEquals("ns", md.schema().get("geneva::view::namespace_path"));
    assertEquals("12", md.schema().get("geneva::view::base_table_version"));
    assertEquals("http://h:2333", md.schema().get("geneva::view::base_table_db_uri"));
    assertEquals(query().toJson(), md.schema().get("geneva::view::query"));
    assertEquals(Map.of("__source_row_id", Map.of("geneva::mv::last_refreshed_version", "12")),
        md.fields());
    GenevaLayout.StoredView back = GenevaLayout.decode(List.of("ns", "v"), md);
    assertEquals(d, back.definition());
    assertEquals(new ViewState(12L, 12L, null), back.state());
  }

  @Test
  void chunkerViewKeepsItsEnvelopeChecksumAndSpecFields() {
    FunctionSpec spec = new FunctionSpec(MaterializedViewKind.CHUNKER, chunker(), null, null,
        1.5, null, 1L << 31, ErrorHandling.fromJson("{\"rules\":[{\"action\":\"skip\"}]}"),
        "{\"m\":1}", "abc");
    ViewDefinition d = new ViewDefinition(List.of("a", "b", "chunks"),
        MaterializedViewKind.CHUNKER, query(), spec, true);
    GenevaLayout.Metadata md = GenevaLayout.encode(d, ViewState.NEVER_REFRESHED, null);
    assertEquals(chunker().toBase64(), md.schema().get("geneva::view::chunker"));
    assertEquals(chunker().sha256Hex(), md.schema().get("lancerest::view::udtf_sha"));
    assertFalse(md.schema().containsKey("geneva::view::base_table_version"));
    assertEquals(Map.of(), md.fields());
    assertEquals(d, GenevaLayout.decode(List.of("a", "b", "chunks"), md).definition());

    Map<String, String> tampered = new java.util.HashMap<>(md.schema());
    tampered.put("lancerest::view::udtf_sha", "0".repeat(64));
    assertThrows(EnvelopeChecksumException.class, () -> GenevaLayout.decode(
        List.of("a", "b", "chunks"), new GenevaLayout.Metadata(tampered, Map.of())));
  }

  @Test
  void genevaViewWithAPythonChunkerIsReadAsPythonNotAsAChecksumProblem() {
    byte[] pickle = {(byte) 0x80, 0x04, 0x4b, 0x01, 0x2e};
    Map<String, String> m = Map.of(
        "geneva::view::version", "scalar_udtf",
        "geneva::view::query", "{\"base\":\"docs\"}",
        "geneva::view::chunker", Base64.getEncoder().encodeToString(pickle));
    UnsupportedFunctionLanguageException e = assertThrows(
        UnsupportedFunctionLanguageException.class,
        () -> GenevaLayout.decode(List.of("v"), new GenevaLayout.Metadata(m, Map.of())));
    assertEquals("python (pickle)", e.language());
    assertEquals("Table ns.t is not a materialized view (no 'geneva::view::version' schema "
        + "metadata)", assertThrows(InvalidViewDefinitionException.class,
            () -> GenevaLayout.decode(List.of("ns", "t"),
                new GenevaLayout.Metadata(Map.of(), Map.of()))).getMessage());
  }
}
