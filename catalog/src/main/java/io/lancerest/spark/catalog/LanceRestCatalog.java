package io.lancerest.spark.catalog;

import io.lancerest.client.HttpTransport;
import io.lancerest.client.Identifiers;
import io.lancerest.client.LanceRestClient;
import io.lancerest.client.RestClientConfig;
import io.lancerest.client.error.AlreadyExistsException;
import io.lancerest.client.error.NamespaceNotEmptyException;
import io.lancerest.client.error.NotFoundException;
import io.lancerest.client.model.DescribeNamespaceRequest;
import io.lancerest.spark.connector.LanceFunctions;
import java.io.Closeable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;
import java.util.function.Supplier;
import org.apache.spark.sql.catalyst.analysis.NamespaceAlreadyExistsException;
import org.apache.spark.sql.catalyst.analysis.NoSuchFunctionException;
import org.apache.spark.sql.catalyst.analysis.NoSuchNamespaceException;
import org.apache.spark.sql.catalyst.analysis.NoSuchTableException;
import org.apache.spark.sql.catalyst.analysis.NonEmptyNamespaceException;
import org.apache.spark.sql.catalyst.analysis.TableAlreadyExistsException;
import org.apache.spark.sql.connector.catalog.FunctionCatalog;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.NamespaceChange;
import org.apache.spark.sql.connector.catalog.StagedTable;
import org.apache.spark.sql.connector.catalog.StagingTableCatalog;
import org.apache.spark.sql.connector.catalog.SupportsNamespaces;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableChange;
import org.apache.spark.sql.connector.catalog.functions.UnboundFunction;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * Spark catalog over a Lance REST namespace server:
 * <pre>
 * spark.sql.catalog.lance     = io.lancerest.spark.catalog.LanceRestCatalog
 * spark.sql.catalog.lance.uri = http://localhost:2333
 * </pre>
 * This class only translates between Spark and the catalog's plain-Java parts: identifiers
 * (with the {@code parent} prefix), and REST errors into Spark's analysis exceptions. Tables are
 * lance-spark datasets handed out by the connector, so the catalog also serves lance-spark's
 * {@code lance_fragment_or_rand} function, without which every INSERT fails.
 *
 * <p>Every session has catalog instances of its own. Under a running SparkContext, the instances
 * of one configuration (name and options) share what is costly to have per session: the REST
 * client's transport (its connection pool, and with OAuth2 its token refresher) and the
 * credential relay; each instance calls through a {@link HttpTransport#view} of that transport,
 * which it closes on its own. What an instance holds of them is given up by {@link #close}, or
 * once its session is gone and the instance has been collected (Spark 3.5 never closes
 * catalogs); the last one closes them, and so does the end of the context. Without a running
 * context the instance has a transport of its own.
 */
public class LanceRestCatalog
    implements StagingTableCatalog, SupportsNamespaces, FunctionCatalog, Closeable {
  private String name;
  private CatalogOptions options;
  private LanceRestClient client;
  private TableOperations tables;
  private NamespaceOperations namespaces;
  private CatalogLifecycle lifecycle;

  @Override
  public void initialize(String name, CaseInsensitiveStringMap options) {
    this.name = name;
    // The case-sensitive view keeps header names (header.X-Tenant) as written.
    CatalogOptions parsed = CatalogOptions.parse(name, options.asCaseSensitiveMap());
    this.options = parsed;
    CatalogLifecycle started = CatalogLifecycle.start(this, name,
        new CatalogLifecycle.ShareKey(name, parsed.clientOptions()));
    HttpTransport shared;
    try {
      // Neither supplier is kept by what it makes: the shared client and relay never reach
      // this instance, so it can be collected with its session.
      shared = started.shared(HttpTransport.class,
          () -> new HttpTransport(RestClientConfig.fromProperties(parsed.clientOptions())));
    } catch (RuntimeException | Error e) {
      // a bad option: Spark drops this instance, whose lease would otherwise wait for the GC
      started.beginClose();
      started.releaseShare();
      throw e;
    }
    this.client = new LanceRestClient(shared.view());
    this.tables = new TableOperations(client, parsed, name, () -> shared(CredentialRelay.class,
        () -> startRelay(new LanceRestClient(shared.view()), parsed)));
    this.namespaces = new NamespaceOperations(client);
    // Last: close() and the other methods take a set lifecycle for a complete instance.
    this.lifecycle = started;
    // lance-core leaves a 150 MiB copy of its native library in the temp directory of every
    // killed JVM (it cannot reuse one): clean up after those
    io.lancerest.spark.connector.NativeLibrarySweep.sweepTempDir();
  }

  /**
   * Closes this instance's client and resources, forgets the cached tables and gives up its
   * share of the shared ones (the last instance closes them); idempotent, and a no-op on an
   * instance whose {@link #initialize} failed. Calls through the catalog afterwards fail with an
   * IllegalStateException that says the client is closed.
   */
  @Override
  public void close() {
    if (lifecycle == null || !lifecycle.beginClose()) {
      return;
    }
    tables.cache().clear();
    // the resources first: the view engine's job service records through the client as it closes
    lifecycle.closeOwned();
    client.close();
    lifecycle.releaseShare();
  }

  /**
   * The catalog instance's one {@code type}, made by {@code create} on first use: state that
   * components acting for this catalog keep across statements (the view engine's caches). It
   * lives as long as the instance and is closed with it by {@link #close}; an instance that is
   * collected without being closed is not closed, so a resource must own no thread and must not
   * register with the SparkContext (use {@link #shared} for those).
   */
  public <T extends AutoCloseable> T resource(Class<T> type, Supplier<T> create) {
    return lifecycle.resource(type, create);
  }

  /**
   * The one {@code type} of this catalog's configuration (name and options) on its
   * SparkContext, shared by the instances of every session, made by {@code create} on first
   * use: threads and pools that would otherwise be one per session. It is closed when the last
   * instance has been closed or collected, or when the context ends. It must not reach a
   * catalog instance or a session (nor may {@code create} be kept by it): an instance it
   * reaches is never collected. Without a running context it is this instance's own.
   */
  public <T extends AutoCloseable> T shared(Class<T> type, Supplier<T> create) {
    return lifecycle.shared(type, create);
  }

  /**
   * The relay executors refresh vended credentials through (authenticated servers): on Spark's
   * driver host unless the catalog's {@code credential-relay.*} options say otherwise. Shared
   * by the instances of the configuration, it asks the server over their shared transport.
   */
  private CredentialRelay startRelay(LanceRestClient relayClient, CatalogOptions options) {
    org.apache.spark.SparkEnv env = org.apache.spark.SparkEnv.get();
    String host = options.relayHost();
    if (host == null && env != null) {
      host = env.conf().getOption("spark.driver.host").getOrElse(() -> null);
    }
    if (host == null) {
      try {
        host = java.net.InetAddress.getLocalHost().getHostAddress();
      } catch (java.net.UnknownHostException e) {
        host = "127.0.0.1";
      }
    }
    String bind = options.relayBindAddress();
    if (bind == null && env != null) {
      bind = env.conf().getOption("spark.driver.bindAddress").getOrElse(() -> null);
    }
    return CredentialRelay.start(relayClient, name, bind == null ? host : bind, host,
        options.relayPort());
  }

  @Override
  public String name() {
    return name;
  }

  /**
   * The catalog's own REST client, for components that act on this catalog's server (the
   * materialized-view engine). It belongs to the catalog: do not close it.
   */
  public LanceRestClient client() {
    return client;
  }

  /**
   * The storage options the view engine uses for table {@code serverId} (its id on the server)
   * after a DescribeTable that vended {@code vended}: the catalog's {@code storage.*} and the
   * vended options, with what renews them when they expire, on the driver and in tasks
   * ({@link io.lancerest.spark.connector.CredentialRefresh}).
   */
  public Map<String, String> engineStorageOptions(List<String> serverId,
      Map<String, String> vended) {
    Map<String, String> ns = tables.executorNamespace(serverId, vended);
    return io.lancerest.spark.connector.CredentialRefresh.withRoute(tables.storage(vended),
        ns == null ? null : DescribedTables.EXECUTOR_NAMESPACE_IMPL, ns, serverId);
  }

  /** The options this catalog was initialized with. */
  public CatalogOptions catalogOptions() {
    return options;
  }

  TableOperations tables() {
    return tables;
  }

  // ---------------------------------------------------------------- identifiers

  private List<String> nsId(String[] namespace) {
    List<String> id = new ArrayList<>(options.parent());
    id.addAll(Arrays.asList(namespace));
    Identifiers.validate(id, client.delimiter());
    return id;
  }

  private List<String> tableId(Identifier ident) {
    List<String> id = nsId(ident.namespace());
    id.add(ident.name());
    Identifiers.validate(id, client.delimiter());
    return id;
  }

  private String display(Identifier ident) {
    List<String> parts = new ArrayList<>();
    parts.add(name);
    parts.addAll(Arrays.asList(ident.namespace()));
    parts.add(ident.name());
    return Identifiers.display(parts);
  }

  private static String[] append(String[] ns, String child) {
    String[] out = Arrays.copyOf(ns, ns.length + 1);
    out[ns.length] = child;
    return out;
  }

  // ---------------------------------------------------------------- namespaces

  @Override
  public String[][] listNamespaces() throws NoSuchNamespaceException {
    return listNamespaces(new String[0]);
  }

  @Override
  public String[][] listNamespaces(String[] namespace) throws NoSuchNamespaceException {
    List<String> id = nsId(namespace);
    List<String> children;
    try {
      children = client.listAllNamespaces(id).toList();
    } catch (NotFoundException e) {
      throw new NoSuchNamespaceException(namespace);
    }
    // Some servers list a missing namespace as empty; only then is an extra call needed.
    if (children.isEmpty() && namespace.length > 0 && !client.namespaceExists(id)) {
      throw new NoSuchNamespaceException(namespace);
    }
    return children.stream().map(c -> append(namespace, c)).toArray(String[][]::new);
  }

  @Override
  public boolean namespaceExists(String[] namespace) {
    return namespace.length == 0 || client.namespaceExists(nsId(namespace));
  }

  @Override
  public Map<String, String> loadNamespaceMetadata(String[] namespace)
      throws NoSuchNamespaceException {
    if (namespace.length == 0) {
      return Map.of();
    }
    try {
      return client.describeNamespace(new DescribeNamespaceRequest().id(nsId(namespace)))
          .getProperties();
    } catch (NotFoundException e) {
      throw new NoSuchNamespaceException(namespace);
    }
  }

  @Override
  public void createNamespace(String[] namespace, Map<String, String> metadata)
      throws NamespaceAlreadyExistsException {
    List<String> id = nsId(namespace);
    if (namespace.length > 1 && !client.namespaceExists(id.subList(0, id.size() - 1))) {
      throw new IllegalArgumentException(new NoSuchNamespaceException(
          Arrays.copyOf(namespace, namespace.length - 1)).getMessage()
          + ". Create the parent namespace first");
    }
    try {
      namespaces.create(id, metadata);
    } catch (AlreadyExistsException e) {
      throw new NamespaceAlreadyExistsException(namespace);
    }
  }

  @Override
  public void alterNamespace(String[] namespace, NamespaceChange... changes) {
    throw new UnsupportedCatalogOperationException("Cannot alter namespace "
        + Identifiers.display(Arrays.asList(namespace)) + ": the Lance REST namespace spec has "
        + "no operation to change namespace properties, so ALTER NAMESPACE … SET DBPROPERTIES / "
        + "SET LOCATION is not supported by the REST namespace spec. Set properties when "
        + "creating the namespace (CREATE NAMESPACE … WITH DBPROPERTIES)");
  }

  @Override
  public boolean dropNamespace(String[] namespace, boolean cascade)
      throws NoSuchNamespaceException, NonEmptyNamespaceException {
    List<String> id = nsId(namespace);
    try {
      namespaces.drop(id, cascade);
      return true;
    } catch (NamespaceNotEmptyException e) {
      throw new NonEmptyNamespaceException(namespace);
    } catch (NotFoundException e) {
      throw new NoSuchNamespaceException(namespace);
    } finally {
      tables.invalidateUnder(id);
    }
  }

  // ---------------------------------------------------------------- tables

  @Override
  public Identifier[] listTables(String[] namespace) throws NoSuchNamespaceException {
    List<String> id = nsId(namespace);
    List<String> names;
    try {
      names = client.listAllTables(id).toList();
    } catch (NotFoundException e) {
      throw new NoSuchNamespaceException(namespace);
    }
    if (names.isEmpty() && namespace.length > 0 && !client.namespaceExists(id)) {
      throw new NoSuchNamespaceException(namespace);
    }
    return names.stream().map(n -> Identifier.of(namespace, n)).toArray(Identifier[]::new);
  }

  @Override
  public Table loadTable(Identifier ident) throws NoSuchTableException {
    return load(ident, (id, shown) -> tables.load(id, shown));
  }

  @Override
  public Table loadTable(Identifier ident, String version) throws NoSuchTableException {
    return load(ident, (id, shown) -> tables.loadAtVersion(id, version, shown));
  }

  @Override
  public Table loadTable(Identifier ident, long timestamp) throws NoSuchTableException {
    return load(ident, (id, shown) -> tables.loadAtTimestamp(id, timestamp, shown));
  }

  private Table load(Identifier ident, BiFunction<List<String>, String, Table> loader)
      throws NoSuchTableException {
    try {
      return loader.apply(tableId(ident), display(ident));
    } catch (NotFoundException e) {
      throw new NoSuchTableException(ident);
    }
  }

  @Override
  public boolean tableExists(Identifier ident) {
    return tables.exists(tableId(ident));
  }

  @Override
  public void invalidateTable(Identifier ident) {
    tables.invalidate(tableId(ident));
  }

  @Override
  public Table createTable(Identifier ident, StructType schema, Transform[] partitions,
      Map<String, String> properties) throws TableAlreadyExistsException, NoSuchNamespaceException {
    List<String> id = tableId(ident);
    requireNoPartitions(ident, partitions);
    requireNamespace(ident);
    try {
      return tables.create(id, schema, properties, display(ident));
    } catch (AlreadyExistsException e) {
      throw new TableAlreadyExistsException(ident);
    }
  }

  @Override
  public StagedTable stageCreate(Identifier ident, StructType schema, Transform[] partitions,
      Map<String, String> properties) throws TableAlreadyExistsException, NoSuchNamespaceException {
    List<String> id = tableId(ident);
    requireNoPartitions(ident, partitions);
    requireNamespace(ident);
    try {
      return tables.stageCreate(id, schema, properties);
    } catch (AlreadyExistsException e) {
      throw new TableAlreadyExistsException(ident);
    }
  }

  @Override
  public StagedTable stageReplace(Identifier ident, StructType schema, Transform[] partitions,
      Map<String, String> properties) throws NoSuchNamespaceException, NoSuchTableException {
    requireNoPartitions(ident, partitions);
    try {
      return tables.stageReplace(tableId(ident), schema, properties);
    } catch (NotFoundException e) {
      throw new NoSuchTableException(ident);
    }
  }

  @Override
  public StagedTable stageCreateOrReplace(Identifier ident, StructType schema,
      Transform[] partitions, Map<String, String> properties) throws NoSuchNamespaceException {
    try {
      return tableExists(ident)
          ? stageReplace(ident, schema, partitions, properties)
          : stageCreate(ident, schema, partitions, properties);
    } catch (NoSuchTableException | TableAlreadyExistsException e) {
      // A concurrent drop or create between the check and the stage.
      throw new IllegalStateException("Table " + display(ident) + " was created or dropped "
          + "concurrently while CREATE OR REPLACE was being prepared; retry the statement", e);
    }
  }

  @Override
  public Table alterTable(Identifier ident, TableChange... changes) throws NoSuchTableException {
    List<String> id = tableId(ident);
    try {
      tables.alter(id, changes);
      return tables.load(id, display(ident));
    } catch (NotFoundException e) {
      throw new NoSuchTableException(ident);
    }
  }

  @Override
  public boolean dropTable(Identifier ident) {
    return tables.drop(tableId(ident));
  }

  @Override
  public boolean purgeTable(Identifier ident) {
    return tables.purge(tableId(ident));
  }

  @Override
  public void renameTable(Identifier from, Identifier to)
      throws NoSuchTableException, TableAlreadyExistsException {
    // RENAME TO <name> without a namespace keeps the table in its namespace.
    Identifier target = to.namespace().length == 0 ? Identifier.of(from.namespace(), to.name())
        : to;
    try {
      tables.rename(tableId(from), tableId(target));
    } catch (io.lancerest.client.error.TableNotFoundException e) {
      throw new NoSuchTableException(from);
    } catch (io.lancerest.client.error.NamespaceNotFoundException e) {
      throw new IllegalArgumentException(
          new NoSuchNamespaceException(target.namespace()).getMessage(), e);
    } catch (AlreadyExistsException e) {
      throw new TableAlreadyExistsException(target);
    }
  }

  private void requireNamespace(Identifier ident) throws NoSuchNamespaceException {
    // The directory server declares tables in namespaces that do not exist.
    if (!namespaceExists(ident.namespace())) {
      throw new NoSuchNamespaceException(ident.namespace());
    }
  }

  private void requireNoPartitions(Identifier ident, Transform[] partitions) {
    if (partitions != null && partitions.length > 0) {
      throw new UnsupportedCatalogOperationException("Cannot create table " + display(ident)
          + " with PARTITIONED BY: Lance tables are not partitioned. Leave the clause out");
    }
  }

  // ---------------------------------------------------------------- functions

  @Override
  public Identifier[] listFunctions(String[] namespace) {
    return LanceFunctions.listFunctions(namespace);
  }

  @Override
  public UnboundFunction loadFunction(Identifier ident) throws NoSuchFunctionException {
    return LanceFunctions.loadFunction(ident);
  }
}
