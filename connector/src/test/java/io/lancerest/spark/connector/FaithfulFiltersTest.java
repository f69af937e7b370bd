package io.lancerest.spark.connector;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.TimeZone;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.SupportsPushDownFilters;
import org.apache.spark.sql.sources.And;
import org.apache.spark.sql.sources.EqualTo;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.sources.GreaterThan;
import org.apache.spark.sql.sources.In;
import org.apache.spark.sql.sources.IsNotNull;
import org.apache.spark.sql.sources.LessThan;
import org.apache.spark.sql.sources.Not;
import org.apache.spark.sql.sources.Or;
import org.apache.spark.sql.sources.StringStartsWith;
import org.junit.jupiter.api.Test;

class FaithfulFiltersTest {
  @Test
  void aQuoteAnywhereInAFilterKeepsItFromLance() {
    Filter quote = new EqualTo("name", "O'Brien");
    assertFalse(FaithfulFilters.faithful(quote));
    assertFalse(FaithfulFilters.faithful(new In("name", new Object[] {"a", "it's"})));
    assertFalse(FaithfulFilters.faithful(new Not(quote)));
    assertFalse(FaithfulFilters.faithful(new Or(new EqualTo("name", "a"), quote)));
    assertFalse(FaithfulFilters.faithful(new And(new IsNotNull("name"), quote)));
    assertFalse(FaithfulFilters.faithful(new StringStartsWith("name", "O'")));
    assertTrue(FaithfulFilters.faithful(new EqualTo("name", "a\\b")));
    assertTrue(FaithfulFilters.faithful(new In("name", new Object[] {"a", "b"})));
  }

  @Test
  void valuesLanceSparkWritesAsAnotherLanceValueAreKeptFromLance() {
    assertFalse(FaithfulFilters.faithful(new EqualTo("x", Double.NaN)));
    assertFalse(FaithfulFilters.faithful(new GreaterThan("x", Float.NEGATIVE_INFINITY)));
    assertFalse(FaithfulFilters.faithful(new In("x", new Object[] {1, null})));
    assertFalse(FaithfulFilters.faithful(new EqualTo("d", LocalDate.of(2024, 1, 2))));
    assertFalse(FaithfulFilters.faithful(new EqualTo("t", Instant.EPOCH)));
    assertFalse(FaithfulFilters.faithful(new EqualTo("b", new byte[] {1})));
    for (Object v : new Object[] {1, 2L, (short) 3, (byte) 4, true, 1.5, 2.5f,
        new BigDecimal("1.25"), java.sql.Date.valueOf("2024-01-02")}) {
      assertTrue(FaithfulFilters.faithful(new EqualTo("c", v)), v.getClass().getName());
    }
  }

  @Test
  void floatsThatLanceOrdersOtherwiseThanSparkAreKeptFromLance() {
    // Lance: -0.0 < 0.0, and a NaN with its sign bit below every number; Spark: -0.0 = 0.0, and
    // every NaN above every number
    assertFalse(FaithfulFilters.faithful(new EqualTo("d", 0.0)));
    assertFalse(FaithfulFilters.faithful(new EqualTo("d", -0.0)));
    assertFalse(FaithfulFilters.faithful(new EqualTo("f", 0.0f)));
    assertFalse(FaithfulFilters.faithful(new In("d", new Object[] {1.5, 0.0})));
    assertFalse(FaithfulFilters.faithful(new GreaterThan("d", 1.0)));
    assertFalse(FaithfulFilters.faithful(new LessThan("f", 1.0f)));
    assertTrue(FaithfulFilters.faithful(new EqualTo("d", 1.5)));
    assertTrue(FaithfulFilters.faithful(new In("f", new Object[] {1.5f, -2.0f})));
    assertTrue(FaithfulFilters.faithful(new GreaterThan("n", 1)), "integers keep their order");
  }

  @Test
  void datesOutsideTheYears1583To9999AndTheSmallestLongAreKeptFromLance() {
    assertFalse(FaithfulFilters.faithful(new EqualTo("d", java.sql.Date.valueOf("1582-10-10"))));
    assertFalse(FaithfulFilters.faithful(new GreaterThan("d",
        java.sql.Date.valueOf(LocalDate.of(10000, 1, 1)))));
    assertFalse(FaithfulFilters.faithful(new EqualTo("l", Long.MIN_VALUE)));
    assertTrue(FaithfulFilters.faithful(new EqualTo("d", java.sql.Date.valueOf("1583-01-01"))));
    assertTrue(FaithfulFilters.faithful(new EqualTo("d", java.sql.Date.valueOf("9999-12-31"))));
    assertTrue(FaithfulFilters.faithful(new EqualTo("l", Long.MIN_VALUE + 1)));
    if (TimeZone.getDefault().getOffset(0L) == 0) {
      assertFalse(FaithfulFilters.faithful(new EqualTo("ts",
          java.sql.Timestamp.valueOf("1582-10-10 00:00:00"))));
    }
  }

  @Test
  void aColumnNamedLikeALanceKeywordKeepsItsFiltersFromLance() {
    // lance-spark writes the name without backticks: `null IS NULL` is true for every row
    assertFalse(FaithfulFilters.faithful(new IsNotNull("null")));
    assertFalse(FaithfulFilters.faithful(new EqualTo("NOT", 1)));
    assertFalse(FaithfulFilters.faithful(new EqualTo("s.current_date", 1)), "a nested part too");
    assertFalse(FaithfulFilters.faithful(new Or(new EqualTo("a", 1), new IsNotNull("true"))));
    assertTrue(FaithfulFilters.faithful(new EqualTo("`null`.x", 1)),
        "in backticks: read as a name");
    assertTrue(FaithfulFilters.faithful(new EqualTo("`a``null`", 1)));
    assertTrue(FaithfulFilters.faithful(new EqualTo("date", java.sql.Date.valueOf("2024-01-01"))),
        "measured: read as the column");
    assertTrue(FaithfulFilters.faithful(new IsNotNull("nullable")));
  }

  @Test
  void aTimestampReachesLanceOnlyWhenTheJvmIsAtUtc() {
    // lance-spark writes the JVM's local wall-clock time, Lance reads it as UTC
    TimeZone before = TimeZone.getDefault();
    Filter ts = new EqualTo("ts", new java.sql.Timestamp(1_704_070_800_000L));
    try {
      TimeZone.setDefault(TimeZone.getTimeZone("UTC"));
      assertTrue(FaithfulFilters.faithful(ts));
      TimeZone.setDefault(TimeZone.getTimeZone("Europe/London")); // UTC in winter only
      assertTrue(FaithfulFilters.faithful(ts));
      assertFalse(FaithfulFilters.faithful(new EqualTo("ts", java.sql.Timestamp.valueOf(
          "2024-07-01 12:00:00"))));
      TimeZone.setDefault(TimeZone.getTimeZone("America/Los_Angeles"));
      assertFalse(FaithfulFilters.faithful(ts));
    } finally {
      TimeZone.setDefault(before);
    }
  }

  @Test
  void onlyFaithfulFiltersReachTheScanAndTheRestAreLeftToSpark() {
    Filter quote = new EqualTo("name", "O'Brien");
    Filter nan = new EqualTo("x", Double.NaN);
    Filter ok = new GreaterThan("id", 1L);
    Filter declined = new StringStartsWith("name", "a");
    Recording scan = new Recording(declined);
    Filter[] post = FaithfulFilters.push(scan, new Filter[] {quote, ok, nan, declined});
    assertArrayEquals(new Filter[] {ok, declined}, scan.offered.toArray());
    assertArrayEquals(new Filter[] {declined, quote, nan}, post);
  }

  /** Accepts every filter but {@code declined}, recording what it was offered. */
  private static final class Recording implements SupportsPushDownFilters {
    final List<Filter> offered = new ArrayList<>();
    private final Filter declined;

    Recording(Filter declined) {
      this.declined = declined;
    }

    @Override
    public Filter[] pushFilters(Filter[] filters) {
      offered.addAll(List.of(filters));
      return offered.contains(declined) ? new Filter[] {declined} : new Filter[0];
    }

    @Override
    public Filter[] pushedFilters() {
      return offered.stream().filter(f -> !f.equals(declined)).toArray(Filter[]::new);
    }

    @Override
    public Scan build() {
      throw new UnsupportedOperationException();
    }
  }
}
