package io.lancerest.spark.connector;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Stream;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.LanceArrowUtils;
import org.lance.CommitBuilder;
import org.lance.Dataset;
import org.lance.Transaction;
import org.lance.operation.Overwrite;
import org.lance.spark.LanceRuntime;
import org.lance.spark.utils.SchemaConverter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Creates the empty Lance dataset of a new table in one commit, never over another creator's, and
 * deletes datasets (PURGE, and the cleanup of failed creates).
 */
final class LanceDatasets {
  // Logged under LanceTables, the category users' log configs name.
  private static final Logger LOG = LoggerFactory.getLogger(LanceTables.class);
  /** A read version no dataset reaches: makes a create commit fail where a dataset exists. */
  private static final long NO_SUCH_VERSION = 1L << 60;
  /** The stored Arrow schema does not depend on Spark's session time zone; lance-spark uses UTC. */
  private static final String ARROW_TIME_ZONE = "UTC";

  private LanceDatasets() {}

  /** See {@link LanceTables#createDataset}. */
  static long createDataset(
      TableHandle handle,
      StructType schema,
      Map<String, String> properties,
      boolean storePropertiesInDataset) {
    Map<String, String> props = properties == null ? Map.of() : properties;
    if (LanceTables.datasetExists(handle.location(), handle.storageOptions())) {
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
    String fileFormat = props.get(LanceTables.FILE_FORMAT_VERSION);
    if (fileFormat != null) {
      commit.storageFormat(fileFormat);
    }
    Transaction.Builder txn = new Transaction.Builder().operation(op.build());
    if (handle.managedVersioning()) {
      commit.namespace(TableReads.namespace(handle)).tableId(handle.tableId());
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
      if (LanceTables.datasetExists(handle.location(), handle.storageOptions())) {
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

  /** See {@link LanceTables#purge}. */
  static void purge(String location, Map<String, String> storageOptions) {
    Objects.requireNonNull(location, "location");
    try {
      Dataset.drop(location, storageOptions == null ? Map.of()
          : CredentialRefresh.current(storageOptions));
    } catch (Exception e) { // the native drop also throws a checked IOException it does not declare
      if (LanceTables.datasetExists(location, storageOptions)) {
        throw new LanceTableException(
            LanceTableException.Reason.OPERATION_FAILED,
            location,
            "Cannot delete the Lance dataset at " + location + ": " + e.getMessage(),
            e);
      }
    }
    // lance-core removes the objects; on a local file system the now empty directories stay.
    localPath(location).ifPresent(LanceDatasets::deleteTree);
  }

  static Schema arrowSchema(StructType schema, Map<String, String> props) {
    // Column hints in the properties (vector sizes, blobs, large strings) become field metadata.
    StructType withHints = SchemaConverter.processSchemaWithProperties(schema, props);
    return LanceArrowUtils.toArrowSchema(withHints, ARROW_TIME_ZONE, true);
  }

  private static boolean stableRowIds(Map<String, String> props) {
    return !"false".equalsIgnoreCase(props.getOrDefault(LanceTables.ENABLE_STABLE_ROW_IDS, "true").trim());
  }

  /** Properties worth keeping in the dataset config: not Spark's, not Lance write options. */
  static Map<String, String> datasetConfig(Map<String, String> props) {
    Map<String, String> config = new LinkedHashMap<>();
    props.forEach(
        (k, v) -> {
          if (!LanceTables.SPARK_RESERVED_PROPERTIES.contains(k)
              && !k.startsWith("option.")
              && !k.equals(LanceTables.ENABLE_STABLE_ROW_IDS)
              && !k.equals(LanceTables.FILE_FORMAT_VERSION)
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
