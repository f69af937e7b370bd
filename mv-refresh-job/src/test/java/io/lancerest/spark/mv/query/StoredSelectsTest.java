package io.lancerest.spark.mv.query;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.spark.connector.LanceLocation;
import io.lancerest.spark.mv.definition.SourceQuery;
import io.lancerest.spark.mv.engine.CatalogBinding;
import io.lancerest.spark.mv.engine.EngineFixture;
import io.lancerest.spark.mv.error.InvalidViewDefinitionException;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.api.java.UDF0;
import org.apache.spark.sql.catalyst.FunctionIdentifier;
import org.apache.spark.sql.catalyst.analysis.FunctionRegistry;
import org.apache.spark.sql.types.DataTypes;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The check of a stored SELECT before a refresh ({@link StoredSelects}): what it remembers of a
 * definition that passed never outlives what the definition's names stand for. The refusal
 * itself, through every kind of REFRESH, is in {@code ViewBadInputTest}.
 */
class StoredSelectsTest {
  static EngineFixture f;
  static String ns;
  static LanceLocation source;

  @BeforeAll
  static void start() {
    f = new EngineFixture(Map.of("mv.mode", "client"));
    ns = f.namespace("stored");
    f.sql("CREATE TABLE lance." + ns + ".src (id BIGINT, ts TIMESTAMP)");
    f.sql("INSERT INTO lance." + ns + ".src VALUES (1, TIMESTAMP '2024-01-01 00:00:00')");
    source = CatalogBinding.of(f.spark, EngineFixture.CATALOG).locate(List.of(ns, "src"),
        "table").dataset();
  }

  @AfterAll
  static void stop() {
    f.close();
  }

  private static SourceQuery where(String filter) {
    return SourceQuery.of(List.of(ns, "src"), List.of(ns), List.of(
        new SourceQuery.OutputColumn("id", "id")), filter, null);
  }

  /**
   * A user-defined function registered under the name of {@code now()} makes a SELECT that
   * calls {@code now()} pass; once the built-in is back, the same SELECT, checked by the same
   * catalog, is refused: a pass of a SELECT with a user-defined function is not remembered.
   */
  @Test
  void aPassOfASelectWithAUserDefinedFunctionIsNotRemembered() {
    StoredSelects selects = new StoredSelects();
    SourceQuery q = where("ts > now()");
    FunctionIdentifier now = new FunctionIdentifier("now", scala.Option.empty(),
        scala.Option.empty());
    f.spark.udf().register("now", (UDF0<java.sql.Timestamp>) () -> new java.sql.Timestamp(0),
        DataTypes.TimestampType);
    try {
      assertDoesNotThrow(() -> selects.check(f.spark, source, q, "lance." + ns + ".v"));
    } finally {
      // give the shared session its built-in now() back
      FunctionRegistry builtin = FunctionRegistry.builtin();
      f.spark.sessionState().functionRegistry().registerFunction(now,
          builtin.lookupFunction(now).get(), builtin.lookupFunctionBuilder(now).get());
    }
    InvalidViewDefinitionException e = assertThrows(InvalidViewDefinitionException.class,
        () -> selects.check(f.spark, source, q, "lance." + ns + ".v"));
    assertTrue(e.getMessage().startsWith("View lance." + ns + ".v cannot be refreshed: its "
        + "SELECT uses now() in WHERE, whose value changes between refreshes"), e.getMessage());
  }

  /** A refused SELECT is refused again: a refusal is never remembered as a pass. */
  @Test
  void aRefusalIsGivenAtEveryCheck() {
    StoredSelects selects = new StoredSelects();
    SourceQuery q = where("ts > current_timestamp() - INTERVAL 7 DAYS");
    for (int i = 0; i < 2; i++) {
      assertThrows(InvalidViewDefinitionException.class,
          () -> selects.check(f.spark, source, q, "lance." + ns + ".v"), "check " + i);
    }
  }
}
