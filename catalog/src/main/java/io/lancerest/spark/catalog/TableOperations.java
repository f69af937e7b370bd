package io.lancerest.spark.catalog;

import io.lancerest.client.Identifiers;
import io.lancerest.client.LanceRestClient;
import io.lancerest.client.RestClientConfig;
import io.lancerest.client.spec.Operation;
import io.lancerest.client.error.ErrorCode;
import io.lancerest.client.error.ErrorDetails;
import io.lancerest.client.error.NotFoundException;
import io.lancerest.client.error.TableAlreadyExistsException;
import io.lancerest.client.error.UnsupportedOperationByServerException;
import io.lancerest.client.model.AlterTableDropColumnsRequest;
import io.lancerest.client.model.DeclareTableRequest;
import io.lancerest.client.model.DeclareTableResponse;
import io.lancerest.client.model.DeregisterTableRequest;
import io.lancerest.client.model.DescribeTableRequest;
import io.lancerest.client.model.DescribeTableResponse;
import io.lancerest.client.model.DropTableRequest;
import io.lancerest.client.model.RenameTableRequest;
import io.lancerest.client.model.UpdateTableSchemaMetadataRequest;
import io.lancerest.spark.connector.CredentialRefresh;
import io.lancerest.spark.connector.LanceTableAlterations;
import io.lancerest.spark.connector.LanceTableException;
import io.lancerest.spark.connector.LanceTables;
import io.lancerest.spark.connector.StagedTableListener;
import io.lancerest.spark.connector.TableHandle;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.connector.catalog.StagedTable;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCatalog;
import org.apache.spark.sql.connector.catalog.TableChange;
import org.apache.spark.sql.types.StructType;
import org.lance.Dataset;
import org.lance.ReadOptions;
import org.lance.spark.LanceDataset;
import org.lance.spark.LanceRuntime;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The table half of the catalog over plain identifiers ({@code List<String>}, the catalog's
 * {@code parent} already prepended). The REST server is asked first; where it lacks an operation
 * and the table's versions are not managed by the namespace, the change is made on the Lance
 * dataset through the connector.
 *
 * <p>Not-found and already-exists answers are left as the REST client's typed exceptions; the
 * Spark facade turns them into Spark's own.
 */
final class TableOperations {
  private static final Logger LOG = LoggerFactory.getLogger(TableOperations.class);
  static final String EXECUTOR_NAMESPACE_IMPL = "rest";

  /** A described table and, once loaded, its Spark table. */
  static final class Entry {
    final DescribeTableResponse describe;
    final TableHandle handle;
    volatile CatalogTable table;

    Entry(DescribeTableResponse describe, TableHandle handle) {
      this.describe = describe;
      this.handle = handle;
    }
  }

  private final LanceRestClient client;
  private final CatalogOptions options;
  private final String catalogName;
  private final TableCache<Entry> cache;
  private final Map<String, String> executorNamespace;
  /** The driver's credential relay, started on first need; null when it is disabled. */
  private final java.util.function.Supplier<CredentialRelay> relay;
  /** Null until the server has answered UpdateTableSchemaMetadata once. */
  private volatile Boolean serverSchemaMetadata;
  private volatile boolean serverColumnOps = true;

  TableOperations(LanceRestClient client, CatalogOptions options, String catalogName,
      java.util.function.Supplier<CredentialRelay> relay) {
    this.client = client;
    this.options = options;
    this.catalogName = catalogName;
    this.cache = new TableCache<>(options.cacheTtl());
    this.executorNamespace = executorNamespaceProperties(client.config());
    this.relay = options.relayEnabled() ? relay : null;
  }

  /**
   * Whether the client authenticates: then executors, which never get its secrets, cannot ask
   * the server for fresh credentials themselves.
   */
  static boolean authenticated(RestClientConfig c) {
    return c.token() != null || c.apiKey() != null || c.oauth2Enabled()
        || c.headers().keySet().stream().anyMatch(RestClientConfig::isSecretHeader);
  }

  /** A cached table whose credentials expire sooner than this is described again. */
  private static final long EXPIRY_MARGIN_MS = 5_000;


  /**
   * What executors get to rebuild the namespace client for credential refresh: the URI, the
   * delimiter and the static headers that are not secrets. Tokens, API keys, OAuth2 secrets and
   * secret-looking headers are never shipped, because task descriptions are serialised to every
   * executor and can be dumped in plain text.
   */
  static Map<String, String> executorNamespaceProperties(RestClientConfig config) {
    Map<String, String> props = new LinkedHashMap<>();
    props.put("uri", config.uri().toString());
    props.put("delimiter", config.delimiter());
    config.headers().forEach((k, v) -> {
      if (!RestClientConfig.isSecretHeader(k)) {
        props.put(RestClientConfig.HEADER_PREFIX + k, v);
      }
    });
    return Map.copyOf(props);
  }

  TableCache<Entry> cache() {
    return cache;
  }

  // ---------------------------------------------------------------- describe and load

  /** The cached entry, or a fresh DescribeTable. Throws the client's NotFoundException. */
  Entry describe(List<String> id) {
    Entry e = cache.get(id);
    Long expires = e == null ? null : CredentialRefresh.expiresAt(e.handle.storageOptions());
    if (e != null && (expires == null
        || expires - System.currentTimeMillis() > EXPIRY_MARGIN_MS)) {
      return e;
    }
    e = describeFresh(id);
    cache.put(id, e);
    return e;
  }

  private Entry describeFresh(List<String> id) {
    DescribeTableResponse d =
        client.describeTable(DescribeTableRequest.of(id).withVendCredentials(true));
    if (d.location() == null || d.location().isBlank()) {
      throw new IllegalStateException("The server described table " + Identifiers.display(id)
          + " without a location; the catalog cannot read it");
    }
    if (!isAbsolute(d.location())) {
      // A relative location would resolve against the driver's working directory.
      throw new IllegalStateException("The server described table " + Identifiers.display(id)
          + " with location '" + d.location() + "', which is neither an absolute URI nor an "
          + "absolute path; the catalog cannot read it. Check the server's answer");
    }
    return new Entry(d, handle(id, d.location(), d.storageOptions(),
        Boolean.TRUE.equals(d.managedVersioning()), d.properties()));
  }

  private static boolean isAbsolute(String location) {
    if (location.startsWith("/")) {
      return true;
    }
    try {
      return new java.net.URI(location).isAbsolute();
    } catch (java.net.URISyntaxException e) {
      return false;
    }
  }

  private TableHandle handle(List<String> id, String location, Map<String, String> vended,
      boolean managed, Map<String, String> serverProps) {
    // The catalog's storage.* options are defaults; what the server vends for this table wins.
    Map<String, String> storage = storage(vended);
    Map<String, String> ns = executorNamespace(id, vended);
    return TableHandle.builder(id, location)
        .storageOptions(storage)
        .managedVersioning(managed)
        .properties(serverProps == null ? Map.of() : serverProps)
        // Managed-versioning tables always need their namespace (only it knows their versions).
        .namespace(ns == null && !managed ? null : EXECUTOR_NAMESPACE_IMPL,
            ns == null ? executorNamespace : ns)
        .scanBatchRows(options.readBatchSize())
        .build();
  }

  /**
   * The storage options of a table: the catalog's {@code storage.*} with what the server vended
   * over them, and, when the vended credentials expire, how long before expiry lance-core renews
   * them.
   */
  Map<String, String> storage(Map<String, String> vended) {
    Map<String, String> storage = new LinkedHashMap<>(options.storageOptions());
    if (vended != null) {
      storage.putAll(CredentialRefresh.withRefreshOffset(vended));
    }
    return storage;
  }

  /**
   * The namespace client executors renew table {@code id}'s expiring credentials with: the
   * server itself, or, when it wants a secret they never get, the driver's relay.
   */
  Map<String, String> executorNamespace(List<String> id, Map<String, String> vended) {
    if (CredentialRefresh.expiresAt(vended) == null || !authenticated(client.config())) {
      return executorNamespace;
    }
    // null: no route works (the relay is off, and the server wants a secret executors never
    // get); Lance uses the credentials vended at planning until they expire.
    return relay == null ? null : relay.get().executorProperties(id);
  }

  boolean exists(List<String> id) {
    try {
      describe(id);
      return true;
    } catch (NotFoundException e) {
      return false;
    }
  }

  /** The latest table; at most one DescribeTable while the cache entry lives. */
  Table load(List<String> id, String displayName) {
    Entry e = describe(id);
    CatalogTable t = e.table;
    if (t == null) {
      t = build(e, null, displayName);
      e.table = t;
    }
    return t;
  }

  /** {@code VERSION AS OF}: a number is a version, anything else a tag. */
  Table loadAtVersion(List<String> id, String versionOrTag, String displayName) {
    Entry e = describe(id);
    long v = LanceTables.resolveVersionOrTag(e.handle, versionOrTag);
    return build(e, v, displayName);
  }

  /** {@code TIMESTAMP AS OF}, given by Spark in microseconds since the epoch. */
  Table loadAtTimestamp(List<String> id, long micros, String displayName) {
    Entry e = describe(id);
    long v = LanceTables.resolveTimestamp(e.handle,
        Instant.EPOCH.plus(micros, ChronoUnit.MICROS));
    return build(e, v, displayName);
  }

  private CatalogTable build(Entry e, Long version, String displayName) {
    Table base = version == null
        ? LanceTables.loadTable(e.handle, catalogName)
        : LanceTables.loadTableAtVersion(e.handle, version, catalogName);
    Map<String, String> props = new LinkedHashMap<>();
    if (e.describe.metadata() != null) {
      props.putAll(e.describe.metadata());
    }
    if (e.describe.properties() != null) {
      props.putAll(e.describe.properties());
    }
    props.put(TableCatalog.PROP_LOCATION, e.describe.location());
    props.put(TableCatalog.PROP_PROVIDER, TableProperties.PROVIDER_LANCE);
    if (e.handle.managedVersioning()) {
      props.put(TableProperties.MANAGED_VERSIONING, "true");
    }
    // The dataset config and version are read when Spark asks (DESCRIBE, SHOW TBLPROPERTIES):
    // writes go through lance-spark, not the catalog, so anything read at load time goes stale.
    MaterializedViewLayout view = MaterializedViewLayout.of(base.schema(), () -> {
      try (Dataset ds = openDataset(e.handle, version)) {
        return ds.getSchema().getCustomMetadata();
      } catch (RuntimeException unreadable) {
        // No dataset to read (e.g. a declared table without data yet): no view metadata either;
        // the write itself reports what is wrong with the table.
        return Map.of();
      }
    });
    return new CatalogTable((LanceDataset) base, e.handle.managedVersioning(), displayName,
        props, () -> datasetProperties(e, version, props), e.handle, version, view);
  }

  private static Map<String, String> datasetProperties(Entry e, Long version,
      Map<String, String> serverProps) {
    Map<String, String> out = new LinkedHashMap<>();
    try (Dataset ds = openDataset(e.handle, version)) {
      TableProperties.fromDatasetConfig(ds.getConfig()).forEach((k, v) -> {
        // What the server keeps wins over the dataset config.
        if (!serverProps.containsKey(k)) {
          out.put(k, v);
        }
      });
      out.put(TableProperties.CURRENT_VERSION, Long.toString(ds.version()));
    }
    return out;
  }

  private static Dataset openDataset(TableHandle handle, Long version) {
    ReadOptions.Builder ro = new ReadOptions.Builder().setStorageOptions(handle.storageOptions());
    if (version != null) {
      ro.setVersion(version);
    }
    return Dataset.open(LanceRuntime.allocator(), handle.location(), ro.build());
  }

  // ---------------------------------------------------------------- create and stage

  /** Properties of a new table: table-default.* under the statement's, checked. */
  Map<String, String> newTableProperties(List<String> id, Map<String, String> statement) {
    Map<String, String> merged = new LinkedHashMap<>(options.tableDefaults());
    merged.putAll(statement);
    String provider = merged.remove(TableCatalog.PROP_PROVIDER);
    if (provider != null && !provider.equalsIgnoreCase(TableProperties.PROVIDER_LANCE)) {
      throw new IllegalArgumentException("Cannot create table " + Identifiers.display(id)
          + " USING " + provider + ": catalog '" + catalogName + "' only holds Lance tables; "
          + "leave out USING or write USING lance");
    }
    // Spark adds these itself; the namespace server decides ownership and external-ness.
    merged.remove(TableCatalog.PROP_OWNER);
    merged.remove(TableCatalog.PROP_EXTERNAL);
    merged.remove(TableCatalog.PROP_IS_MANAGED_LOCATION);
    for (String k : merged.keySet()) {
      if (TableProperties.isReserved(k) && !k.equals(TableCatalog.PROP_LOCATION)) {
        throw reserved(id, k);
      }
    }
    return merged;
  }

  /** A declared table whose dataset is not written yet. */
  private record Declared(TableHandle handle, boolean serverKeepsProperties) {}

  private Declared declare(List<String> id, Map<String, String> props) {
    Map<String, String> userProps = new LinkedHashMap<>(props);
    String location = userProps.remove(TableCatalog.PROP_LOCATION);
    DeclareTableRequest request = DeclareTableRequest.builder(id)
        .location(location).vendCredentials(true).properties(userProps).build();
    DeclareTableResponse r;
    try {
      r = client.declareTable(request);
    } catch (RuntimeException e) {
      if (!OutcomeUnknown.is(e)) {
        throw e;
      }
      return reconcileDeclare(id, request, e);
    }
    if (r.location() == null || r.location().isBlank()) {
      deregisterQuietly(id);
      throw new IllegalStateException("The server declared table " + Identifiers.display(id)
          + " without giving it a location; the catalog cannot write its data");
    }
    return new Declared(
        handle(id, r.location(), r.storageOptions(), Boolean.TRUE.equals(r.managedVersioning()),
            r.properties()),
        r.properties() != null);
  }

  /**
   * DeclareTable's outcome is unknown: re-read. Not there: it was not applied, so declaring once
   * more cannot apply it twice. Declared without data: ours (or a racing creator's, whose own
   * dataset create then fails cleanly), so go on and write it. With data: someone else's table.
   */
  private Declared reconcileDeclare(List<String> id, DeclareTableRequest request,
      RuntimeException lost) {
    DescribeTableResponse d;
    try {
      d = client.describeTable(DescribeTableRequest.of(id).withVendCredentials(true));
    } catch (NotFoundException notApplied) {
      OutcomeUnknown.reconciled("DeclareTable", id, "not declared, declaring again", lost);
      DeclareTableResponse r = client.declareTable(request);
      return new Declared(handle(id, r.location(), r.storageOptions(),
          Boolean.TRUE.equals(r.managedVersioning()), r.properties()), r.properties() != null);
    }
    if (d.location() == null || d.location().isBlank()) {
      throw lost;
    }
    TableHandle h = handle(id, d.location(), d.storageOptions(),
        Boolean.TRUE.equals(d.managedVersioning()), d.properties());
    if (LanceTables.datasetExists(h.location(), h.storageOptions())) {
      OutcomeUnknown.reconciled("DeclareTable", id, "a table with data exists", lost);
      throw othersTable(id, lost);
    }
    OutcomeUnknown.reconciled("DeclareTable", id, "declared, going on", lost);
    return new Declared(h, d.properties() != null);
  }

  /** The dataset create found data at the location: someone else's, never to be cleaned up. */
  private static boolean foundOthersData(Exception e) {
    return e instanceof LanceTableException lte
        && lte.reason() == LanceTableException.Reason.ALREADY_EXISTS;
  }

  private static TableAlreadyExistsException othersTable(List<String> id, Exception cause) {
    return new TableAlreadyExistsException(new ErrorDetails("table already exists: it was "
        + "created concurrently, with data this statement did not write (left untouched)",
        "Choose another name, or drop the existing table first", ErrorCode.TABLE_ALREADY_EXISTS,
        0, Operation.DECLARE_TABLE, Identifiers.display(id), null, null), cause);
  }

  Table create(List<String> id, StructType schema, Map<String, String> statementProps,
      String displayName) {
    Map<String, String> props = newTableProperties(id, statementProps);
    Declared declared = declare(id, props);
    try {
      LanceTables.createDataset(declared.handle, schema, datasetProps(props),
          !declared.serverKeepsProperties);
    } catch (Exception e) {
      // Exception, not RuntimeException: lance-core's native calls also throw the checked
      // java.io.IOException undeclared (an object store it cannot reach), and that failure
      // must not leave the declaration behind either. Rethrown as it came.
      if (foundOthersData(e)) {
        throw othersTable(id, e);
      }
      // Nothing may stay behind: not the declaration, not a half-written dataset.
      deregisterQuietly(id);
      try {
        LanceTables.purge(declared.handle.location(), declared.handle.storageOptions());
      } catch (Exception cleanup) {
        e.addSuppressed(cleanup); // the create's own failure is the one to report
      }
      throw e;
    } finally {
      cache.invalidate(id);
    }
    return load(id, displayName);
  }

  private static Map<String, String> datasetProps(Map<String, String> props) {
    Map<String, String> p = new LinkedHashMap<>(props);
    p.remove(TableCatalog.PROP_LOCATION);
    return TableProperties.toDatasetConfig(p);
  }

  StagedTable stageCreate(List<String> id, StructType schema, Map<String, String> statementProps) {
    Map<String, String> props = newTableProperties(id, statementProps);
    Declared declared = declare(id, props);
    cache.invalidate(id);
    try {
      return LanceTables.stageCreate(declared.handle, schema, datasetProps(props),
          !declared.serverKeepsProperties, catalogName, listener(id, true));
    } catch (RuntimeException e) {
      if (foundOthersData(e)) {
        throw othersTable(id, e);
      }
      deregisterQuietly(id);
      throw e;
    }
  }

  /**
   * RTAS. The replaced table's properties are the statement's (plus table-default.*), not a merge
   * with the old ones: once the data has committed, the server's map or the dataset config is
   * replaced as a whole. The connector is told not to store properties itself, because its
   * follow-up commit upserts and would keep every old key.
   */
  StagedTable stageReplace(List<String> id, StructType schema, Map<String, String> statementProps) {
    Map<String, String> props = newTableProperties(id, statementProps);
    props.remove(TableCatalog.PROP_LOCATION);
    cache.invalidate(id);
    Entry e = describe(id);
    boolean serverProps = e.describe.properties() != null;
    if (!serverProps && !props.isEmpty()) {
      // Checked before any data is written, so a refused RTAS leaves the table untouched.
      requireUnmanaged(id, e, "replace table properties");
    }
    return LanceTables.stageReplace(e.handle, schema, datasetProps(props), false,
        catalogName, listener(id, false, () -> replaceProperties(id, e, serverProps, props)));
  }

  /** After an RTAS commit: the table's properties become exactly {@code props}. */
  private void replaceProperties(List<String> id, Entry e, boolean serverProps,
      Map<String, String> props) {
    if (serverProps && !Boolean.FALSE.equals(serverSchemaMetadata)) {
      try {
        client.updateTableSchemaMetadata(new UpdateTableSchemaMetadataRequest(id, null, props));
        serverSchemaMetadata = true;
        return;
      } catch (UnsupportedOperationByServerException ex) {
        serverSchemaMetadata = false;
      }
    }
    if (e.handle.managedVersioning()) {
      if (!props.isEmpty()) {
        requireUnmanaged(id, e, "replace table properties");
      }
      return;
    }
    try (Dataset ds = openDataset(e.handle, null)) {
      Map<String, String> current = ds.getConfig();
      Map<String, String> next = TableProperties.replacedDatasetConfig(current, datasetProps(props));
      if (!next.equals(current)) {
        // lance-core's updateConfig replaces the whole config: one commit, no stale keys.
        ds.updateConfig(next);
      }
    }
  }

  private StagedTableListener listener(List<String> id, boolean created) {
    return listener(id, created, () -> { });
  }

  private StagedTableListener listener(List<String> id, boolean created, Runnable onCommit) {
    return new StagedTableListener() {
      @Override
      public void committed(TableHandle table, long version) {
        try {
          onCommit.run();
        } finally {
          cache.invalidate(id);
        }
      }

      @Override
      public void aborted(TableHandle table) {
        cache.invalidate(id);
        if (created) {
          // The connector removed the dataset; the declaration must go too, or a failed CTAS
          // would leave an empty, unreadable table behind.
          deregisterQuietly(id);
        }
      }
    };
  }

  private void deregisterQuietly(List<String> id) {
    try {
      client.deregisterTable(new DeregisterTableRequest(id));
    } catch (NotFoundException ignored) {
      // already gone
    } catch (RuntimeException e) {
      LOG.warn("Could not deregister table {} after a failed create: {}", Identifiers.display(id),
          e.getMessage());
    }
  }

  // ---------------------------------------------------------------- drop, purge, rename

  /** DROP TABLE: the namespace forgets the table, its data stays. False when it did not exist. */
  boolean drop(List<String> id) {
    try {
      client.deregisterTable(new DeregisterTableRequest(id));
      return true;
    } catch (NotFoundException e) {
      return false;
    } catch (RuntimeException e) {
      return reconcileGone("DeregisterTable", id, e,
          () -> client.deregisterTable(new DeregisterTableRequest(id)));
    } finally {
      cache.invalidate(id);
    }
  }

  /** DROP TABLE … PURGE: table and data are deleted. */
  boolean purge(List<String> id) {
    try {
      client.dropTable(new DropTableRequest(id));
      return true;
    } catch (NotFoundException e) {
      return false;
    } catch (UnsupportedOperationByServerException e) {
      // The server can only forget tables: delete the data ourselves, then forget it.
      Entry entry = describeFresh(id);
      client.deregisterTable(new DeregisterTableRequest(id));
      LanceTables.purge(entry.handle.location(), entry.handle.storageOptions());
      return true;
    } catch (RuntimeException e) {
      return reconcileGone("DropTable", id, e, () -> client.dropTable(new DropTableRequest(id)));
    } finally {
      cache.invalidate(id);
    }
  }

  /**
   * A drop whose outcome is unknown: done if the table is gone now; otherwise it was not applied,
   * and {@code again} (the same drop) is sent once more, whose error, if any, stands.
   */
  private boolean reconcileGone(String what, List<String> id, RuntimeException e,
      Runnable again) {
    if (!OutcomeUnknown.is(e)) {
      throw e;
    }
    cache.invalidate(id);
    try {
      client.describeTable(DescribeTableRequest.of(id));
    } catch (NotFoundException gone) {
      OutcomeUnknown.reconciled(what, id, "the table is gone, the drop was applied", e);
      return true;
    }
    OutcomeUnknown.reconciled(what, id, "the table is still there, dropping again", e);
    try {
      again.run();
    } catch (NotFoundException raced) {
      // dropped by someone else in between: gone, which is what was asked
    }
    return true;
  }

  void rename(List<String> from, List<String> to) {
    List<String> fromNs = from.subList(0, from.size() - 1);
    List<String> toNs = to.subList(0, to.size() - 1);
    try {
      client.renameTable(new RenameTableRequest(from, to.get(to.size() - 1),
          fromNs.equals(toNs) ? null : toNs));
    } catch (UnsupportedOperationByServerException e) {
      throw new UnsupportedCatalogOperationException("Cannot rename table "
          + Identifiers.display(from) + " to " + Identifiers.display(to) + ": the namespace "
          + "server at " + client.config().uri() + " does not support renaming tables. Copy it "
          + "instead (CREATE TABLE <new> AS SELECT * FROM <old>, then DROP TABLE <old>)", e);
    } finally {
      cache.invalidate(from);
      cache.invalidate(to);
    }
  }

  // ---------------------------------------------------------------- alter

  void alter(List<String> id, TableChange... changes) {
    cache.invalidate(id);
    Entry e = describe(id);
    Map<String, String> set = new LinkedHashMap<>();
    Set<String> unset = new HashSet<>();
    List<TableChange> columnChanges = new ArrayList<>();
    for (TableChange c : changes) {
      if (c instanceof TableChange.SetProperty s) {
        checkSettable(id, s.property());
        if (s.property().equals(TableCatalog.PROP_COMMENT)
            && (s.value() == null || s.value().isEmpty())) {
          // COMMENT ON TABLE … IS NULL arrives as an empty comment: remove it, as Hive does.
          set.remove(s.property());
          unset.add(s.property());
        } else {
          unset.remove(s.property());
          set.put(s.property(), s.value());
        }
      } else if (c instanceof TableChange.RemoveProperty r) {
        checkSettable(id, r.property());
        unset.add(r.property());
      } else {
        columnChanges.add(c);
      }
    }
    if (!columnChanges.isEmpty() && isView(e)) {
      throw new IllegalArgumentException("Table " + Identifiers.display(id) + " is a "
          + "materialized view: its columns come from its definition, and adding, dropping, "
          + "renaming or retyping one would break its next refresh. Change the view's SELECT "
          + "instead (DROP MATERIALIZED VIEW, then CREATE MATERIALIZED VIEW)");
    }
    try {
      if (!set.isEmpty() || !unset.isEmpty()) {
        alterProperties(id, e, set, unset);
      }
      for (TableChange c : columnChanges) {
        alterColumn(id, e, c);
      }
    } finally {
      cache.invalidate(id);
    }
  }

  /** Whether the table carries the materialized-view layout (a table it cannot open: no). */
  private static boolean isView(Entry e) {
    try (Dataset ds = openDataset(e.handle, null)) {
      Map<String, String> md = ds.getSchema().getCustomMetadata();
      return md != null && md.containsKey(MaterializedViewLayout.MARKER);
    } catch (RuntimeException unreadable) {
      return false;
    }
  }

  private void checkSettable(List<String> id, String key) {
    if (TableProperties.isReserved(key)) {
      throw reserved(id, key);
    }
    if (TableProperties.CREATE_ONLY.contains(key.toLowerCase(Locale.ROOT))) {
      throw new IllegalArgumentException("Table property '" + key + "' of "
          + Identifiers.display(id) + " is fixed when the table is created and cannot be "
          + "changed; recreate the table (CREATE OR REPLACE TABLE … AS SELECT) to change it");
    }
  }

  private static IllegalArgumentException reserved(List<String> id, String key) {
    return new IllegalArgumentException("Table property '" + key + "' of "
        + Identifiers.display(id) + " is reserved: the catalog computes it, so it cannot be set "
        + "or removed. Reserved keys: " + new java.util.TreeSet<>(TableProperties.RESERVED));
  }

  private void alterProperties(List<String> id, Entry e, Map<String, String> set,
      Set<String> unset) {
    if (!Boolean.FALSE.equals(serverSchemaMetadata)) {
      try {
        // The operation replaces the whole map: start from what the server holds now.
        DescribeTableResponse d = client.describeTable(
            DescribeTableRequest.of(id).withLoadDetailedMetadata(true));
        Map<String, String> next = new LinkedHashMap<>();
        if (d.metadata() != null) {
          next.putAll(d.metadata());
        } else if (d.properties() != null) {
          next.putAll(d.properties());
        }
        next.putAll(set);
        unset.forEach(next::remove);
        client.updateTableSchemaMetadata(new UpdateTableSchemaMetadataRequest(id, null, next));
        serverSchemaMetadata = true;
        return;
      } catch (UnsupportedOperationByServerException ex) {
        serverSchemaMetadata = false;
        LOG.info("Server lacks UpdateTableSchemaMetadata; table properties go to the dataset");
      }
    }
    requireUnmanaged(id, e, "change table properties");
    Map<String, String> cfg = TableProperties.toDatasetConfig(set);
    LanceTableAlterations.setProperties(e.handle, cfg);
    Set<String> keys = new HashSet<>();
    unset.forEach(k -> keys.add(TableProperties.datasetConfigKey(k)));
    LanceTableAlterations.unsetProperties(e.handle, keys);
  }

  private void alterColumn(List<String> id, Entry e, TableChange c) {
    if (serverColumnOps && tryServerColumnChange(id, c)) {
      return;
    }
    requireUnmanaged(id, e, "change columns");
    LanceTableAlterations.alterTable(e.handle, c);
  }

  /**
   * True when the server applied the change; false when it has no operation for it. Only column
   * drops go to the server: its AlterTableAlterColumns needs the full Arrow data type even for a
   * rename (the directory server rejects entries without {@code data_type}), which Spark's change
   * does not carry, so renames, type and nullability changes go to the dataset.
   */
  private boolean tryServerColumnChange(List<String> id, TableChange c) {
    if (!(c instanceof TableChange.DeleteColumn d)) {
      return false;
    }
    try {
      client.alterTableDropColumns(new AlterTableDropColumnsRequest(id, null,
          List.of(String.join(".", d.fieldNames()))));
      return true;
    } catch (UnsupportedOperationByServerException ex) {
      serverColumnOps = false;
      return false;
    }
  }

  private void requireUnmanaged(List<String> id, Entry e, String what) {
    if (e.handle.managedVersioning()) {
      throw new UnsupportedCatalogOperationException("Cannot " + what + " of table "
          + Identifiers.display(id) + ": the namespace server manages its versions "
          + "(managed_versioning=true) but does not implement this operation, and changing the "
          + "Lance dataset directly would bypass it");
    }
  }

  /** Every table below {@code namespace} leaves the cache (DROP NAMESPACE). */
  void invalidateUnder(List<String> namespace) {
    cache.invalidateUnder(namespace);
  }

  void invalidate(List<String> id) {
    cache.invalidate(id);
  }
}
