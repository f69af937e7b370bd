package io.lancerest.spark.catalog;

import io.lancerest.spark.connector.LanceTables;
import io.lancerest.spark.connector.TableHandle;
import java.time.Instant;
import java.time.ZoneId;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import org.apache.spark.sql.catalyst.util.DateTimeUtils;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;
import scala.Option;

/**
 * Time travel asked for through read options, as in
 * {@code spark.read().option("versionAsOf", 3).table("lance.ns.t")}.
 *
 * <p>Spark 3.5 turns only the SQL clauses ({@code VERSION AS OF}, {@code TIMESTAMP AS OF}) into a
 * versioned {@code loadTable}; options given to {@code DataFrameReader.table} reach the table
 * only when Spark builds the scan, after the plan's schema was fixed from the latest version. So
 * the version is resolved here, at scan time, and a version whose schema differs from the one
 * Spark already resolved is refused rather than read with the wrong columns.
 *
 * <p>Accepted keys (case-insensitive, as Spark passes them): {@value #VERSION_AS_OF} (a version
 * number or a tag name, like {@code VERSION AS OF}), {@value #TIMESTAMP_AS_OF} (a timestamp string
 * in the session time zone, like {@code TIMESTAMP AS OF}) and lance-spark's own {@value #VERSION}
 * (a version number). At most one of them, and none on a table already read with a SQL clause.
 */
final class TimeTravelOptions {
  static final String VERSION_AS_OF = "versionAsOf";
  static final String TIMESTAMP_AS_OF = "timestampAsOf";
  /** lance-spark's read option ({@code LanceSparkReadOptions.CONFIG_VERSION}). */
  static final String VERSION = "version";

  private static final List<String> KEYS = List.of(VERSION_AS_OF, TIMESTAMP_AS_OF, VERSION);
  private static final Set<String> LOWER_KEYS =
      Set.of(VERSION_AS_OF.toLowerCase(Locale.ROOT), TIMESTAMP_AS_OF.toLowerCase(Locale.ROOT),
          VERSION);
  private static final Pattern NUMBER = Pattern.compile("\\d+");

  private TimeTravelOptions() {}

  static boolean isTimeTravelKey(String key) {
    return LOWER_KEYS.contains(key.toLowerCase(Locale.ROOT));
  }

  /**
   * The version the options ask for, checked to exist and to have the schema Spark resolved, or
   * {@code null} when they ask for none.
   *
   * @param options the scan's options, keys in any case
   * @param pinnedBySql the version a SQL {@code VERSION/TIMESTAMP AS OF} loaded the table at, or
   *     {@code null}
   */
  static Long resolve(Map<String, String> options, TableHandle handle, String table,
      Long pinnedBySql, StructType resolvedSchema) {
    List<String> given = new ArrayList<>();
    String key = null;
    String value = null;
    for (String k : KEYS) {
      String v = get(options, k);
      if (v != null) {
        given.add(k + "=" + v);
        key = k;
        value = v.trim();
      }
    }
    if (given.isEmpty()) {
      return null;
    }
    if (given.size() > 1) {
      throw new IllegalArgumentException("Cannot read table " + table + " with the read options "
          + String.join(" and ", given) + ": they ask for different points in time. Give only one"
          + " of " + VERSION_AS_OF + ", " + TIMESTAMP_AS_OF + " or " + VERSION + ".");
    }
    if (pinnedBySql != null) {
      throw new IllegalArgumentException("Cannot read table " + table + " with the read option "
          + given.get(0) + ": the query already reads it at version " + pinnedBySql
          + " (VERSION AS OF / TIMESTAMP AS OF). Use either the SQL clause or the option, not"
          + " both.");
    }
    long version = switch (key) {
      case TIMESTAMP_AS_OF -> LanceTables.resolveTimestamp(handle, parseTimestamp(table, value));
      case VERSION -> {
        if (!NUMBER.matcher(value).matches()) {
          throw new IllegalArgumentException("Cannot read table " + table + ": read option "
              + VERSION + " must be a version number, got '" + value + "'. For a tag use "
              + VERSION_AS_OF + ".");
        }
        yield LanceTables.resolveVersionOrTag(handle, value);
      }
      default -> LanceTables.resolveVersionOrTag(handle, value);
    };
    StructType then = LanceTables.schemaAt(handle, version);
    if (!sameColumns(then, resolvedSchema)) {
      throw new IllegalArgumentException("Cannot read table " + table + " at version " + version
          + " through the read option " + key + ": the columns then were "
          + then.simpleString() + " but Spark already resolved the query with the current "
          + resolvedSchema.simpleString() + ". Use SQL instead, which resolves the columns of"
          + " that version: SELECT * FROM " + table + " VERSION AS OF " + version);
    }
    return version;
  }

  private static String get(Map<String, String> options, String key) {
    for (Map.Entry<String, String> e : options.entrySet()) {
      if (e.getKey().equalsIgnoreCase(key) && e.getValue() != null) {
        return e.getValue();
      }
    }
    return null;
  }

  /** Spark's own timestamp syntax and session time zone, as for {@code TIMESTAMP AS OF '…'}. */
  private static Instant parseTimestamp(String table, String value) {
    ZoneId zone = DateTimeUtils.getZoneId(SQLConf.get().sessionLocalTimeZone());
    Option<Object> micros = DateTimeUtils.stringToTimestamp(UTF8String.fromString(value), zone);
    if (micros.isEmpty()) {
      throw new IllegalArgumentException("Cannot read table " + table + ": read option "
          + TIMESTAMP_AS_OF + " '" + value + "' is not a timestamp; write it like"
          + " '2026-11-30 10:00:00' (session time zone " + zone + ") or with an offset.");
    }
    return Instant.EPOCH.plus((Long) micros.get(), ChronoUnit.MICROS);
  }

  /** Names and types in order; nullability may legitimately differ between versions. */
  private static boolean sameColumns(StructType a, StructType b) {
    if (a.fields().length != b.fields().length) {
      return false;
    }
    for (int i = 0; i < a.fields().length; i++) {
      if (!a.fields()[i].name().equals(b.fields()[i].name())
          || !a.fields()[i].dataType().sameType(b.fields()[i].dataType())) {
        return false;
      }
    }
    return true;
  }
}
