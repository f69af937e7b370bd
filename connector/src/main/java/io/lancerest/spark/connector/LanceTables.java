package io.lancerest.spark.connector;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.connector.catalog.StagedTable;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.LanceArrowUtils;
import org.lance.CommitBuilder;
import org.lance.Dataset;
import org.lance.ReadOptions;
import org.lance.Tag;
import org.lance.Transaction;
import org.lance.Version;
import org.lance.io.StorageOptionsProvider;
import org.lance.namespace.LanceNamespace;
import org.lance.operation.Overwrite;
import org.lance.spark.LancePositionDeltaDataset;
import org.lance.spark.LanceRuntime;
import org.lance.spark.LanceSparkCatalogConfig;
import org.lance.spark.LanceSparkReadOptions;
import org.lance.spark.utils.SchemaConverter;
import org.lance.spark.write.StagedCommit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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

  private static final Logger LOG = LoggerFactory.getLogger(LanceTables.class);
  private static final Pattern VERSION_NUMBER = Pattern.compile("\\d+");
  /** A read version no dataset reaches: makes a create commit fail where a dataset exists. */
  private static final long NO_SUCH_VERSION = 1L << 60;
  /** The stored Arrow schema does not depend on Spark's session time zone; lance-spark uses UTC. */
  private static final String ARROW_TIME_ZONE = "UTC";

  private LanceTables() {}

  // ---------------------------------------------------------------- load and time travel

  /** The table at the handle's version ({@code null}: latest). */
  public static Table loadTable(TableHandle handle, String catalogName) {
    try (Dataset ds = openAt(handle, handle.version())) {
      return newTable(handle, handle.version(), ds, catalogName);
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
    try (Dataset ds = openAt(handle, null)) {
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
    try (Dataset ds = openAt(handle, null)) {
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
    try (Dataset ds = openAt(handle.withVersion(null), version)) {
      return LanceArrowUtils.fromArrowSchema(ds.getSchema());
    }
  }

  /** The dataset's current version number. */
  public static long latestVersion(TableHandle handle) {
    try (Dataset ds = openAt(handle.withVersion(null), null)) {
      return ds.version();
    }
  }

  // ---------------------------------------------------------------- create

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
    Map<String, String> props = properties == null ? Map.of() : properties;
    if (datasetExists(handle.location(), handle.storageOptions())) {
      throw alreadyExists(handle, null); // the common case, before any write
    }
    Overwrite.Builder op = Overwrite.builder().fragments(List.of()).schema(arrowSchema(schema, props));
    Map<String, String> config = storePropertiesInDataset ? datasetConfig(props) : Map.of();
    if (!config.isEmpty()) {
      op.configUpsertValues(config);
    }
    // An Overwrite of nothing creates version 1 with schema, config and the stable-row-id flag in
    // one commit (Dataset.write would need a second commit for the config).
    CommitBuilder commit =
        new CommitBuilder(handle.location(), LanceRuntime.allocator())
            .writeParams(handle.storageOptions())
            .useStableRowIds(stableRowIds(props));
    String fileFormat = props.get(FILE_FORMAT_VERSION);
    if (fileFormat != null) {
      commit.storageFormat(fileFormat);
    }
    Transaction.Builder txn = new Transaction.Builder().operation(op.build());
    if (handle.managedVersioning()) {
      commit.namespace(namespace(handle)).tableId(handle.tableId());
    } else {
      // The check above races with another creator (two CREATE TABLEs after lost DeclareTable
      // answers). Lance is the arbiter: a brand-new dataset's first manifest is written only if
      // none exists, but a commit that finds a dataset already there would overwrite it as its
      // next version. Reading from a version that never exists makes that second case fail
      // instead ("not found"), so of racing creators exactly one commits and none overwrites.
      // (Lance's own create mode is no arbiter in lance-core 4.0.0: it checks, then commits the
      // same way.) "Written only if none exists" is a put-if-absent of the manifest: atomic on
      // local and POSIX file systems, and on object stores only where Lance's commit handler
      // provides it (e.g. conditional writes); elsewhere the race is narrowed, not closed.
      // Managed-versioning tables commit through the namespace, which decides.
      txn.readVersion(NO_SUCH_VERSION);
    }
    try (Transaction t = txn.build();
        Dataset created = commit.execute(t)) {
      LOG.info(
          "Created Lance dataset for table {} at {} (version {})",
          handle.displayName(),
          handle.location(),
          created.version());
      return created.version();
    } catch (RuntimeException e) {
      // Our commit failed, so a dataset there now is another creator's: leave it alone.
      if (datasetExists(handle.location(), handle.storageOptions())) {
        throw alreadyExists(handle, e);
      }
      throw new LanceTableException(
          LanceTableException.Reason.OPERATION_FAILED,
          handle.displayName(),
          "Cannot create the Lance dataset of table "
              + handle.displayName()
              + " at "
              + handle.location()
              + ": "
              + e.getMessage(),
          e);
    }
  }

  private static LanceTableException alreadyExists(TableHandle handle, Throwable cause) {
    return new LanceTableException(
        LanceTableException.Reason.ALREADY_EXISTS,
        handle.displayName(),
        "Cannot create table "
            + handle.displayName()
            + ": a Lance dataset already exists at "
            + handle.location()
            + ". Drop it with PURGE or choose another location.",
        cause);
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

  // ---------------------------------------------------------------- staged CTAS / RTAS

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
    Map<String, String> props = properties == null ? Map.of() : properties;
    TableHandle latest = handle.withVersion(null);
    if (handle.managedVersioning()) {
      Schema arrow = arrowSchema(schema, props);
      StagedCommit staged =
          StagedCommit.forNewTable(
              arrow,
              handle.location(),
              handle.storageOptions(),
              namespace(handle),
              handle.tableId(),
              true);
      return new StagedLanceTable(
          readOptions(latest, null, catalogName),
          LanceArrowUtils.fromArrowSchema(arrow),
          latest,
          staged,
          props.get(FILE_FORMAT_VERSION),
          false,
          Map.of(),
          listener);
    }
    createDataset(latest, schema, props, storePropertiesInDataset);
    try {
      return stageOverExisting(latest, props, Map.of(), true, catalogName, listener, null);
    } catch (RuntimeException e) {
      purge(handle.location(), handle.storageOptions());
      throw e;
    }
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
    Map<String, String> props = properties == null ? Map.of() : properties;
    TableHandle latest = handle.withVersion(null);
    Map<String, String> config = storePropertiesInDataset ? datasetConfig(props) : Map.of();
    if (!config.isEmpty()) {
      LanceTableAlterations.requireUnmanaged(latest, "set table properties");
    }
    return stageOverExisting(latest, props, config, false, catalogName, listener, schema);
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

  private static StagedTable stageOverExisting(
      TableHandle handle,
      Map<String, String> props,
      Map<String, String> configAfterCommit,
      boolean createdDataset,
      String catalogName,
      StagedTableListener listener,
      StructType newSchema) {
    // newSchema null: keep the dataset's schema (staged create, whose dataset was just made).
    // StagedCommit keeps this dataset open until commit or abort and closes it then.
    Dataset ds = openAt(handle, null);
    try {
      Schema arrow = newSchema == null ? ds.getSchema() : arrowSchema(newSchema, props);
      String fileFormat = props.getOrDefault(FILE_FORMAT_VERSION, ds.getLanceFileFormatVersion());
      StagedCommit staged =
          StagedCommit.forExistingTable(
              ds,
              arrow,
              handle.storageOptions(),
              handle.managedVersioning() ? namespace(handle) : null,
              handle.tableId(),
              handle.managedVersioning());
      return new StagedLanceTable(
          readOptions(handle, null, catalogName),
          LanceArrowUtils.fromArrowSchema(arrow),
          handle,
          staged,
          fileFormat,
          createdDataset,
          configAfterCommit,
          listener);
    } catch (RuntimeException e) {
      ds.close();
      throw e;
    }
  }

  // ---------------------------------------------------------------- existence and purge

  /**
   * Whether a Lance dataset can be opened at {@code location}. Any failure counts as "no": use
   * {@link #loadTable} to learn why a dataset cannot be read.
   */
  public static boolean datasetExists(String location, Map<String, String> storageOptions) {
    try (Dataset ignored = open(location, storageOptions, null)) {
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
    Objects.requireNonNull(location, "location");
    try {
      Dataset.drop(location, storageOptions == null ? Map.of()
          : CredentialRefresh.current(storageOptions));
    } catch (Exception e) { // the native drop also throws a checked IOException it does not declare
      if (datasetExists(location, storageOptions)) {
        throw new LanceTableException(
            LanceTableException.Reason.OPERATION_FAILED,
            location,
            "Cannot delete the Lance dataset at " + location + ": " + e.getMessage(),
            e);
      }
    }
    // lance-core removes the objects; on a local file system the now empty directories stay.
    localPath(location).ifPresent(LanceTables::deleteTree);
  }

  // ---------------------------------------------------------------- internals

  static Dataset openAt(TableHandle handle, Long version) {
    StorageOptionsProvider refresh = CredentialRefresh.provider(handle);
    Dataset latest = open(handle.location(), handle.storageOptions(), handle.displayName(), null,
        refresh);
    if (version == null || version == latest.version()) {
      return latest;
    }
    try {
      if (version < 0) {
        throw new UnknownTableVersionException(handle.displayName(), "version " + version,
            "Versions are numbered from 1; its latest version is " + latest.version() + ".");
      }
      // Opened directly, by its own manifest. Listing the versions reads every manifest (34 ms
      // at 200 versions, 119 ms at 400 on a local disk; docs/benchmarks.md), so it is left to a
      // failed open, to tell a version that is not there (UnknownTableVersionException) from
      // another failure.
      return open(handle.location(), handle.storageOptions(), handle.displayName(), version,
          refresh);
    } catch (LanceTableException e) {
      try {
        requireVersion(handle, latest, version);
      } catch (RuntimeException listing) {
        listing.addSuppressed(e);
        throw listing;
      }
      throw e;
    } finally {
      latest.close();
    }
  }

  private static void requireVersion(TableHandle handle, Dataset latest, long version) {
    List<Version> versions = latest.listVersions();
    if (versions.stream().noneMatch(v -> v.getId() == version)) {
      throw new UnknownTableVersionException(
          handle.displayName(),
          "version " + version,
          versions.isEmpty()
              ? "The table has no versions."
              : "Its latest version is "
                  + latest.version()
                  + "; available versions: "
                  + describeRange(versions)
                  + " (older ones may have been cleaned up).");
    }
  }

  private static String describeRange(List<Version> versions) {
    long min = versions.stream().mapToLong(Version::getId).min().orElse(0);
    long max = versions.stream().mapToLong(Version::getId).max().orElse(0);
    return versions.size() == max - min + 1
        ? min + ".." + max
        : versions.stream()
            .map(v -> Long.toString(v.getId()))
            .limit(50)
            .collect(Collectors.joining(", "));
  }

  private static Dataset open(String location, Map<String, String> storageOptions, String table) {
    return open(location, storageOptions, table, null, null);
  }

  private static Dataset open(String location, Map<String, String> storageOptions, String table,
      Long version, StorageOptionsProvider refresh) {
    ReadOptions.Builder options =
        new ReadOptions.Builder()
            .setStorageOptions(storageOptions == null ? Map.of() : storageOptions);
    if (version != null) {
      options.setVersion(version);
    }
    if (refresh != null) {
      options.setStorageOptionsProvider(refresh);
    }
    try {
      return Dataset.open(LanceRuntime.allocator(), location, options.build());
    } catch (RuntimeException e) {
      String name = table == null ? location : table;
      String message = String.valueOf(e.getMessage());
      boolean missing = message.toLowerCase(Locale.ROOT).contains("not found");
      throw new LanceTableException(
          missing
              ? LanceTableException.Reason.NOT_FOUND
              : LanceTableException.Reason.OPERATION_FAILED,
          name,
          (missing
                  ? "Table " + name + " has no Lance dataset at " + location
                  : "Cannot open the Lance dataset of table " + name + " at " + location)
              + (version == null ? "" : " (version " + version + ")")
              + ": "
              + message,
          e);
    }
  }

  private static Table newTable(TableHandle handle, Long version, Dataset ds, String catalogName) {
    LanceSparkReadOptions read = readOptions(handle, version, catalogName);
    int batch = handle.scanBatchRows() != null ? handle.scanBatchRows()
        : ScanBatchRows.forDataset(ds);
    if (batch != read.getBatchSize()) {
      read = readOptions(handle, version, catalogName, batch);
    }
    return new LancePositionDeltaDataset(
        read,
        LanceArrowUtils.fromArrowSchema(ds.getSchema()),
        handle.storageOptions(),
        handle.namespaceImpl(),
        handle.namespaceProperties(),
        handle.managedVersioning(),
        ds.getLanceFileFormatVersion());
  }

  static LanceSparkReadOptions readOptions(TableHandle handle, Long version, String catalogName) {
    return readOptions(handle, version, catalogName, null);
  }

  /** @param batchRows rows per scan batch, or {@code null} for lance-spark's */
  static LanceSparkReadOptions readOptions(TableHandle handle, Long version, String catalogName,
      Integer batchRows) {
    // Mutable copies: lance-spark's OPTIMIZE and CREATE INDEX ship these options to their tasks
    // with Kryo, which rebuilds a collection by adding to a new instance of its class and so
    // fails on the JDK's immutable ones (UnsupportedOperationException).
    LanceSparkReadOptions.Builder options =
        LanceSparkReadOptions.builder()
            .datasetUri(handle.location())
            .storageOptions(new java.util.HashMap<>(handle.storageOptions()))
            .tableId(new java.util.ArrayList<>(handle.tableId()))
            .catalogName(catalogName);
    if (batchRows != null) {
      options.batchSize(batchRows);
    }
    if (version != null) {
      // lance-spark 0.4.0 keeps read versions as Integer.
      options.version(Math.toIntExact(version));
    }
    if (handle.managedVersioning() || (handle.namespaceImpl() != null
        && CredentialRefresh.expiresAt(handle.storageOptions()) != null)) {
      // Only the namespace knows the current version of such tables, so lance-spark must open
      // through it; and lance-spark renews expiring credentials on the driver (its commits)
      // only for datasets it opened through one. Other tables skip it: every open through a
      // namespace is a DescribeTable.
      options.namespace(namespace(handle));
    }
    return options.build();
  }

  static LanceNamespace namespace(TableHandle handle) {
    if (handle.namespaceImpl() == null) {
      throw new IllegalStateException(
          "Table "
              + handle.displayName()
              + " uses managed versioning but its handle carries no namespace connection"
              + " (namespaceImpl); build the TableHandle with namespace(\"rest\", {uri, header.*}).");
    }
    return LanceRuntime.getOrCreateNamespace(handle.namespaceImpl(), handle.namespaceProperties());
  }

  private static Schema arrowSchema(StructType schema, Map<String, String> props) {
    // Column hints in the properties (vector sizes, blobs, large strings) become field metadata.
    StructType withHints = SchemaConverter.processSchemaWithProperties(schema, props);
    return LanceArrowUtils.toArrowSchema(withHints, ARROW_TIME_ZONE, true);
  }

  private static boolean stableRowIds(Map<String, String> props) {
    return !"false".equalsIgnoreCase(props.getOrDefault(ENABLE_STABLE_ROW_IDS, "true").trim());
  }

  /** Properties worth keeping in the dataset config: not Spark's, not Lance write options. */
  static Map<String, String> datasetConfig(Map<String, String> props) {
    Map<String, String> config = new LinkedHashMap<>();
    props.forEach(
        (k, v) -> {
          if (!SPARK_RESERVED_PROPERTIES.contains(k)
              && !k.startsWith("option.")
              && !k.equals(ENABLE_STABLE_ROW_IDS)
              && !k.equals(FILE_FORMAT_VERSION)
              && v != null) {
            config.put(k, v);
          }
        });
    return config;
  }

  private static java.util.Optional<Path> localPath(String location) {
    if (location.startsWith("file:")) {
      return java.util.Optional.of(Paths.get(URI.create(location)));
    }
    if (!location.contains("://")) {
      return java.util.Optional.of(Paths.get(location));
    }
    return java.util.Optional.empty();
  }

  private static void deleteTree(Path root) {
    if (!Files.exists(root)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(root)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot remove the dataset directory " + root, e);
    }
  }
}
