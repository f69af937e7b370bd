package io.lancerest.spark.catalog;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The reported case, as a new user ran it through the catalog: a 2M-row table, three rounds of
 * a 1 % INSERT and an UPDATE of 0.1 % of the rows spread over every fragment, then a GROUP BY
 * over a filtered projection. Before the scans were made safe the query never returned (two
 * lance-core threads spinning, a filtered scan of a fragment with deletions fetching {@code
 * name} by row id); now it returns the right groups in seconds. The session's bounded wait
 * ({@code JobWatchdog}) fails it with the statement if it ever hangs again.
 */
@Tag("slow")
class ScatteredUpdatesScenarioTest {
  static final long ROWS = 2_000_000;

  @Test
  void aGroupByAfterScatteredUpdatesReturnsTheRightGroups() {
    SparkSession spark = SharedSpark.get().spark;
    String t = "lance." + SharedSpark.unique("scatter") + ".src";
    spark.sql("CREATE NAMESPACE " + t.substring(0, t.lastIndexOf('.')));
    String row = "id, cast(id % 1000 AS INT) AS k, id * 0.5 AS v, concat('name', cast(id AS "
        + "STRING)) AS name";
    spark.sql("CREATE TABLE " + t + " AS SELECT " + row + " FROM range(" + ROWS + ")");
    long next = ROWS;
    for (int round = 0; round < 3; round++) {
      spark.sql("INSERT INTO " + t + " SELECT " + row + " FROM range(" + next + ", "
          + (next + ROWS / 100) + ")");
      next += ROWS / 100;
      spark.sql("UPDATE " + t + " SET name = concat(name, 'u') WHERE id % 1000 = " + (7 + round));
    }

    List<Row> r = spark.sql("SELECT count(*), sum(c), sum(length(uname)), sum(v2) FROM ("
        + "SELECT id, uname, v2, count(*) AS c FROM (SELECT id, upper(name) AS uname, v * 2 AS v2 "
        + "FROM " + t + " WHERE id % 3 = 0) GROUP BY 1, 2, 3)").collectAsList();

    long groups = 0;
    long length = 0;
    long sumV2 = 0;
    for (long id = 0; id < next; id += 3) {
      groups++;
      length += ("name" + id).length() + updates(id);
      sumV2 += id;
    }
    Row got = r.get(0);
    assertEquals(List.of(groups, groups, length), List.of(got.getLong(0), got.getLong(1),
        got.getLong(2)));
    assertEquals(new java.math.BigDecimal(sumV2), got.getDecimal(3).stripTrailingZeros()
        .setScale(0));
  }

  /** How many of the three UPDATEs appended a 'u' to the name of row {@code id}. */
  private static int updates(long id) {
    int n = 0;
    for (int round = 0; round < 3; round++) {
      long existing = ROWS + (round + 1) * (ROWS / 100);
      if (id < existing && id % 1000 == 7 + round) {
        n++;
      }
    }
    return n;
  }
}
