package io.lancerest.spark.catalog;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The contract every backend of the catalog must keep, run once per server kind. Capability
 * flags say where a backend legitimately differs (the directory server cannot rename tables or
 * keep table properties); tests of a missing capability assert the clean error instead.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class CatalogContractTest {
  protected SharedSpark shared;
  protected SparkSession spark;

  /** The Spark catalog under test. */
  abstract String catalog();

  /** The server implements RenameTable. */
  abstract boolean supportsRename();

  /** The server keeps table properties (DescribeTable answers them). */
  abstract boolean serverKeepsProperties();

  @BeforeAll
  void startShared() {
    shared = SharedSpark.get();
    spark = shared.spark;
  }

  protected List<Row> sql(String statement) {
    return spark.sql(statement).collectAsList();
  }

  /** A fresh namespace under the catalog, as {@code <catalog>.<ns>}. */
  protected String newNamespace() {
    String ns = catalog() + "." + SharedSpark.unique("ns");
    sql("CREATE NAMESPACE " + ns);
    return ns;
  }

  @Test
  void createInsertSelect() {
    String ns = newNamespace();
    sql("CREATE TABLE " + ns + ".t (id BIGINT, name STRING)");
    sql("INSERT INTO " + ns + ".t VALUES (1, 'a'), (2, 'b')");
    List<Row> rows = sql("SELECT id, name FROM " + ns + ".t ORDER BY id");
    assertEquals(2, rows.size());
    assertEquals("b", rows.get(1).getString(1));
  }
}
