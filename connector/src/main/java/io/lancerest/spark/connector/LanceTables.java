package io.lancerest.spark.connector;

import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apache.spark.sql.connector.catalog.StagedTable;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.LanceArrowUtils;
import org.lance.Dataset;
import org.lance.Tag;
import org.lance.Version;
import org.lance.operation.Overwrite;
import org.lance.spark.LancePositionDeltaDataset;
import org.lance.spark.LanceSparkCatalogConfig;

/**
 * Turns a {@link TableHandle} into Spark tables backed by lance-spark, and creates, stages and
 * purges the Lance datasets behind catalog tables.
 *
 * <p>Every table handed out is lance-spark's {@link LancePositionDeltaDataset}, so reads, INSERT,
 * DELETE, UPDATE and MERGE work unchanged. The catalog serving these tables must also serve {@link
 * LanceFunctions} or every INSERT fails.
 */
public final class LanceTables {

  /** Table property: give rows ids that survive updates and compaction. Defaults to true here. */
  public static final String ENABLE_STABLE_ROW_IDS =
      LanceSparkCatalogConfig.TABLE_OPT_ENABLE_STABLE_ROW_IDS;

  /** Table property: Lance file format version for new data files (e.g. {@code 2.1}). */
  public static final String FILE_FORMAT_VERSION =
      LanceSparkCatalogConfig.TABLE_OPT_FILE_FORMAT_VERSION;

  /**
   * Properties that describe the table to Spark or the catalog, never to the dataset (Spark's
   * {@code TableCatalog.PROP_*} plus {@code path}); they are not written into dataset config.
   */
  public static final Set<String> SPARK_RESERVED_PROPERTIES =
      Set.of("provider", "location", "comment", "owner", "external", "is_managed_location", "path");

  private static final Pattern VERSION_NUMBER = Pattern.compile("\\d+");

  private LanceTables() {}

  // ---------------------------------------------------------------- load and time travel

  /** The table at the handle's version ({@code null}: latest). */
  public static Table loadTable(TableHandle handle, String catalogName) {
    try (Dataset ds = DatasetOpener.openAt(handle, handle.version())) {
      return TableReads.newTable(handle, handle.version(), ds, catalogName);
    }
  }

  /** The table as of {@code version}; fails with {@link UnknownTableVersionException}. */
  public static Table loadTableAtVersion(TableHandle handle, long version, String catalogName) {
    return loadTable(handle.withVersion(version), catalogName);
  }

  /** The table at the version a tag points to. */
  public static Table loadTableAtTag(TableHandle handle, String tag, String catalogName) {
    return loadTableAtVersion(handle, resolveTag(handle, tag), catalogName);
  }

  /**
   * Spark's {@code VERSION AS OF 'x'}: all digits is a version number, anything else a tag name.
   */
  public static Table loadTableAtVersionOrTag(
      TableHandle handle, String versionOrTag, String catalogName) {
    return loadTableAtVersion(handle, resolveVersionOrTag(handle, versionOrTag), catalogName);
  }

  /**
   * Spark's {@code TIMESTAMP AS OF}: the latest version committed at or before the timestamp,
   * given in microseconds since the epoch as Spark passes it to {@code TableCatalog.loadTable}.
   */
  public static Table loadTableAsOfTimestamp(
      TableHandle handle, long timestampMicros, String catalogName) {
    Instant at = Instant.EPOCH.plus(timestampMicros, ChronoUnit.MICROS);
    return loadTableAtVersion(handle, resolveTimestamp(handle, at), catalogName);
  }

  /**
   * See {@link #loadTableAtVersionOrTag}. A number is returned as given, without opening the
   * table: every use opens that version next, which fails with {@link
   * UnknownTableVersionException} when it is not there.
   */
  public static long resolveVersionOrTag(TableHandle handle, String versionOrTag) {
    Objects.requireNonNull(versionOrTag, "versionOrTag");
    String trimmed = versionOrTag.trim();
    if (VERSION_NUMBER.matcher(trimmed).matches()) {
      return Long.parseLong(trimmed);
    }
    return resolveTag(handle, trimmed);
  }

  /** The version a tag points to. */
  public static long resolveTag(TableHandle handle, String tag) {
    try (Dataset ds = DatasetOpener.openAt(handle, null)) {
      List<Tag> tags = ds.tags().list();
      return tags.stream()
          .filter(t -> t.getName().equals(tag))
          .findFirst()
          .map(Tag::getVersion)
          .orElseThrow(
              () ->
                  new UnknownTableVersionException(
                      handle.displayName(),
                      "tag '" + tag + "'",
                      tags.isEmpty()
                          ? "The table has no tags."
                          : "Known tags: "
                              + tags.stream()
                                  .map(Tag::getName)
                                  .sorted()
                                  .limit(20)
                                  .collect(Collectors.joining(", "))
                              + "."));
    }
  }

  /** The latest version committed at or before {@code at}. */
  public static long resolveTimestamp(TableHandle handle, Instant at) {
    try (Dataset ds = DatasetOpener.openAt(handle, null)) {
      List<Version> versions = ds.listVersions();
      return versions.stream()
          .filter(v -> !v.getDataTime().toInstant().isAfter(at))
          .max(Comparator.comparingLong(Version::getId))
          .map(Version::getId)
          .orElseThrow(
              () ->
                  new UnknownTableVersionException(
                      handle.displayName(),
                      "version at or before " + at,
                      versions.stream()
                          .map(Version::getDataTime)
                          .map(ZonedDateTime::toInstant)
                          .min(Comparator.naturalOrder())
                          .map(first -> "Its first version was committed at " + first + ".")
                          .orElse("The table has no versions.")));
    }
  }

  /**
   * The Spark schema of the table as of {@code version}; fails with {@link
   * UnknownTableVersionException} when the version does not exist.
   */
  public static StructType schemaAt(TableHandle handle, long version) {
    try (Dataset ds = DatasetOpener.openAt(handle.withVersion(null), version)) {
      return LanceArrowUtils.fromArrowSchema(ds.getSchema());
    }
  }

  /** The dataset's current version number. */
  public static long latestVersion(TableHandle handle) {
    try (Dataset ds = DatasetOpener.openAt(handle.withVersion(null), null)) {
      return ds.version();
    }
  }

  // ---------------------------------------------------------------- create and stage

  /**
   * Creates an empty dataset at the handle's location in one commit, and returns its version.
   * Fails with {@link LanceTableException.Reason#ALREADY_EXISTS} when a dataset exists there or
   * another creator makes one first, never replacing it.
   *
   * <p>Like lance-spark's CREATE TABLE, {@code properties} may carry {@value
   * #ENABLE_STABLE_ROW_IDS} (default <b>true</b> here: materialized views key on stable row ids),
   * {@value #FILE_FORMAT_VERSION}, and lance-spark's column hints ({@code
   * <col>.arrow.fixed-size-list.size}, blob and large-string markers). With {@code
   * storePropertiesInDataset}, every other property except Spark's reserved ones is written into
   * the dataset config in the same commit, for servers that cannot store table properties.
   */
  public static long createDataset(
      TableHandle handle,
      StructType schema,
      Map<String, String> properties,
      boolean storePropertiesInDataset) {
    return LanceDatasets.createDataset(handle, schema, properties, storePropertiesInDataset);
  }

  /** {@link #createDataset} and then {@link #loadTable}. */
  public static Table createTable(
      TableHandle handle,
      StructType schema,
      Map<String, String> properties,
      boolean storePropertiesInDataset,
      String catalogName) {
    createDataset(handle, schema, properties, storePropertiesInDataset);
    return loadTable(handle.withVersion(null), catalogName);
  }

  /**
   * A staged table for CTAS: the query's rows land in the new dataset in one Overwrite commit at
   * {@code commitStagedChanges}; {@code abortStagedChanges} removes the dataset directory.
   *
   * <p>The empty dataset (version 1, with stable row ids and config) is created right away because
   * lance-spark's staged commit for a <i>new</i> table cannot enable stable row ids; the data then
   * commits as version 2. Tables with managed versioning follow lance-spark's own route instead
   * (nothing written before the commit, which goes through the namespace).
   */
  public static StagedTable stageCreate(
      TableHandle handle,
      StructType schema,
      Map<String, String> properties,
      boolean storePropertiesInDataset,
      String catalogName,
      StagedTableListener listener) {
    return StagedTables.stageCreate(
        handle, schema, properties, storePropertiesInDataset, catalogName, listener);
  }

  /**
   * A staged table for RTAS on an existing dataset: one Overwrite commit replaces schema and rows,
   * keeping history, stable-row-id setting and config; an abort leaves the table untouched.
   * Properties to store in the dataset are applied right after the data commit.
   */
  public static StagedTable stageReplace(
      TableHandle handle,
      StructType schema,
      Map<String, String> properties,
      boolean storePropertiesInDataset,
      String catalogName,
      StagedTableListener listener) {
    return StagedTables.stageReplace(
        handle, schema, properties, storePropertiesInDataset, catalogName, listener);
  }

  /** RTAS when the dataset exists, CTAS otherwise. */
  public static StagedTable stageCreateOrReplace(
      TableHandle handle,
      StructType schema,
      Map<String, String> properties,
      boolean storePropertiesInDataset,
      String catalogName,
      StagedTableListener listener) {
    return datasetExists(handle.location(), handle.storageOptions())
        ? stageReplace(handle, schema, properties, storePropertiesInDataset, catalogName, listener)
        : stageCreate(handle, schema, properties, storePropertiesInDataset, catalogName, listener);
  }

  // ---------------------------------------------------------------- existence and purge

  /**
   * Whether a Lance dataset can be opened at {@code location}. Any failure counts as "no": use
   * {@link #loadTable} to learn why a dataset cannot be read.
   */
  public static boolean datasetExists(String location, Map<String, String> storageOptions) {
    try (Dataset ignored = DatasetOpener.open(location, storageOptions, null)) {
      return true;
    } catch (RuntimeException e) {
      return false;
    }
  }

  /**
   * Deletes the dataset's data and manifests (DROP TABLE ... PURGE). Missing datasets are fine:
   * purge is also the cleanup path of failed creates.
   */
  public static void purge(String location, Map<String, String> storageOptions) {
    LanceDatasets.purge(location, storageOptions);
  }
}
