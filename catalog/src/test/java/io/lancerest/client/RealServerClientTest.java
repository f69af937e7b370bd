package io.lancerest.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.client.arrow.JsonArrowSchemas;
import io.lancerest.client.error.ClientConfigException;
import io.lancerest.client.error.NamespaceAlreadyExistsException;
import io.lancerest.client.error.NamespaceNotEmptyException;
import io.lancerest.client.error.NamespaceNotFoundException;
import io.lancerest.client.error.TableAlreadyExistsException;
import io.lancerest.client.error.TableNotFoundException;
import io.lancerest.client.error.UnsupportedOperationByServerException;
import io.lancerest.client.model.CountTableRowsRequest;
import io.lancerest.client.model.CreateMaterializedViewRequest;
import io.lancerest.client.model.CreateNamespaceRequest;
import io.lancerest.client.model.CreateTableIndexRequest;
import io.lancerest.client.model.CreateTableRequest;
import io.lancerest.client.model.CreateTableResponse;
import io.lancerest.client.model.DeclareTableRequest;
import io.lancerest.client.model.DeregisterTableRequest;
import io.lancerest.client.model.DescribeNamespaceRequest;
import io.lancerest.client.model.DescribeTableRequest;
import io.lancerest.client.model.DescribeTableResponse;
import io.lancerest.client.model.DropNamespaceRequest;
import io.lancerest.client.model.DropTableRequest;
import io.lancerest.client.model.DropTableResponse;
import io.lancerest.client.model.CreateTableTagRequest;
import io.lancerest.client.model.GetTableStatsRequest;
import io.lancerest.client.model.InsertIntoTableRequest;
import io.lancerest.client.model.QueryTableRequest;
import io.lancerest.client.model.QueryTableRequestVector;
import io.lancerest.client.model.ListAllTablesRequest;
import io.lancerest.client.model.ListNamespacesRequest;
import io.lancerest.client.model.ListNamespacesResponse;
import io.lancerest.client.model.ListTableTagsRequest;
import io.lancerest.client.model.ListTablesRequest;
import io.lancerest.client.model.ListTablesResponse;
import io.lancerest.client.model.RefreshMaterializedViewRequest;
import io.lancerest.client.model.RegisterTableRequest;
import io.lancerest.client.model.RenameTableRequest;
import io.lancerest.client.model.TableVersion;
import io.lancerest.client.model.UpdateTableSchemaMetadataRequest;
import io.lancerest.client.testing.RestServerFixture;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Every operation the upstream "dir" REST server supports, through our client, against the real
 * server in-process. What the server does not implement is asserted as the exact exception.
 */
class RealServerClientTest {
  private static final Schema SCHEMA = new Schema(List.of(
      Field.notNullable("id", new ArrowType.Int(32, true)),
      Field.nullable("name", ArrowType.Utf8.INSTANCE)));

  private static RestServerFixture server;
  private static LanceRestClient client;
  private static BufferAllocator allocator;

  @BeforeAll
  static void start() {
    server = RestServerFixture.start();
    client = server.newClient();
    allocator = new RootAllocator();
  }

  @AfterAll
  static void stop() {
    client.close();
    allocator.close();
    server.close();
  }

  private static void createNs(String... id) {
    client.createNamespace(new CreateNamespaceRequest().id(List.of(id)));
  }

  /** A table in {@code ns} holding rows 0..rows-1 named "n0", "n1", …. */
  private static CreateTableResponse createTable(List<String> id, int rows) {
    try (VectorSchemaRoot root = VectorSchemaRoot.create(SCHEMA, allocator)) {
      IntVector ids = (IntVector) root.getVector("id");
      VarCharVector names = (VarCharVector) root.getVector("name");
      for (int i = 0; i < rows; i++) {
        ids.setSafe(i, i);
        names.setSafe(i, ("n" + i).getBytes(java.nio.charset.StandardCharsets.UTF_8));
      }
      root.setRowCount(rows);
      return client.createTable(new CreateTableRequest().id(id), root);
    }
  }

  @Test
  void namespacesNestThreeDeepWithProperties() {
    createNs("n1");
    createNs("n1", "n2");
    client.createNamespace(
        new CreateNamespaceRequest().id(List.of("n1", "n2", "n3"))
            .properties(Map.of("owner", "ann")));

    assertEquals(Map.of("owner", "ann"),
        client.describeNamespace(new DescribeNamespaceRequest().id(List.of("n1", "n2", "n3")))
            .getProperties());
    assertEquals(List.of("n2"), client.listAllNamespaces(List.of("n1")).toList());
    assertEquals(List.of("n3"), client.listAllNamespaces(List.of("n1", "n2")).toList());
    assertTrue(client.listAllNamespaces(List.of()).toList().contains("n1"));
    assertTrue(client.namespaceExists(List.of("n1", "n2", "n3")));
    assertFalse(client.namespaceExists(List.of("n1", "n2", "missing")));

    NamespaceAlreadyExistsException dup = assertThrows(NamespaceAlreadyExistsException.class,
        () -> createNs("n1", "n2"));
    assertTrue(dup.getMessage().startsWith("CreateNamespace 'n1.n2': namespace already exists"),
        dup.getMessage());

    NamespaceNotEmptyException notEmpty = assertThrows(NamespaceNotEmptyException.class,
        () -> client.dropNamespace(new DropNamespaceRequest().id(List.of("n1", "n2"))));
    assertTrue(notEmpty.getMessage().contains("namespace is not empty"), notEmpty.getMessage());
    // The dir server refuses Cascade as well: a catalog promising CASCADE must drop children.
    assertThrows(NamespaceNotEmptyException.class, () -> client.dropNamespace(
        new DropNamespaceRequest().id(List.of("n1", "n2")).behavior("Cascade")));

    client.dropNamespace(new DropNamespaceRequest().id(List.of("n1", "n2", "n3")));
    assertFalse(client.namespaceExists(List.of("n1", "n2", "n3")));
    NamespaceNotFoundException gone = assertThrows(NamespaceNotFoundException.class,
        () -> client.dropNamespace(new DropNamespaceRequest().id(List.of("n1", "n2", "n3"))));
    assertTrue(gone.getMessage().startsWith("DropNamespace 'n1.n2.n3': namespace not found"),
        gone.getMessage());
    assertThrows(NamespaceNotFoundException.class, () -> client.describeNamespace(
        new DescribeNamespaceRequest().id(List.of("n1", "n2", "n3"))));
  }

  @Test
  void namesWithSpacesUnicodePercentAndSlashRoundTrip() {
    List<String> odd = List.of("sp ace", "ünï/%20ç😀");
    createNs(odd.get(0));
    createNs(odd.toArray(String[]::new));
    assertEquals(List.of(odd.get(1)), client.listAllNamespaces(List.of(odd.get(0))).toList());
    List<String> table = List.of(odd.get(0), odd.get(1), "t 1%/é");
    createTable(table, 2);
    assertEquals(List.of("t 1%/é"), client.listAllTables(odd).toList());
    DescribeTableResponse d = client.describeTable(new DescribeTableRequest().id(table));
    assertEquals("t 1%/é", d.getTable());
    assertEquals(odd, d.getNamespace());
    assertTrue(client.tableExists(table));
  }

  @Test
  void aNameContainingTheDelimiterIsRefusedBeforeAnyCall() {
    ClientConfigException e = assertThrows(ClientConfigException.class,
        () -> client.describeTable(new DescribeTableRequest().id(List.of("ns", "a$b"))));
    assertTrue(e.getMessage().contains("contains the namespace delimiter '$'"), e.getMessage());
  }

  @Test
  void tableLifecycleCreateDescribeVersionsDeregisterRegisterDrop() {
    createNs("life");
    List<String> id = List.of("life", "t");
    CreateTableResponse created = createTable(id, 3);
    assertEquals(1L, created.getVersion());
    assertTrue(created.getLocation().endsWith("life$t"), created.getLocation());

    TableAlreadyExistsException dup =
        assertThrows(TableAlreadyExistsException.class, () -> createTable(id, 1));
    assertTrue(dup.getMessage().startsWith("CreateTable 'life.t': table already exists"),
        dup.getMessage());

    DescribeTableResponse plain = client.describeTable(new DescribeTableRequest().id(id));
    assertEquals(created.getLocation(), plain.getLocation());
    DescribeTableResponse detailed = client.describeTable(new DescribeTableRequest().id(id)
        .withTableUri(true).loadDetailedMetadata(true).checkDeclared(true));
    assertEquals(1L, detailed.getVersion());
    assertEquals(SCHEMA, JsonArrowSchemas.toArrow(detailed.getSchema()));
    assertNotNull(detailed.getTableUri());
    assertEquals(1L, client.describeTable(new DescribeTableRequest().id(id).version(1L)
        .loadDetailedMetadata(true)).getVersion());

    List<TableVersion> versions = client.listAllTableVersions(id).toList();
    assertEquals(List.of(1L), versions.stream().map(TableVersion::getVersion).toList());
    assertTrue(versions.get(0).getManifestPath().contains("_versions"));

    assertTrue(client.tableExists(id));
    assertFalse(client.tableExists(List.of("life", "missing")));
    assertFalse(client.tableExists(List.of("no_such_ns", "missing")));

    // Deregister forgets the table, register brings the same data back.
    var dereg = client.deregisterTable(new DeregisterTableRequest().id(id));
    assertFalse(client.tableExists(id));
    String relative = server.rootDir().toUri().relativize(
        java.net.URI.create(dereg.getLocation())).toString();
    var reg = client.registerTable(new RegisterTableRequest().id(id).location(relative));
    assertTrue(reg.getLocation().endsWith("life$t"), reg.getLocation());
    assertEquals(1L, client.describeTable(new DescribeTableRequest().id(id)
        .loadDetailedMetadata(true)).getVersion());

    DropTableResponse dropped = client.dropTable(new DropTableRequest().id(id));
    assertEquals(id, dropped.getId());
    TableNotFoundException missing = assertThrows(TableNotFoundException.class,
        () -> client.describeTable(new DescribeTableRequest().id(id)));
    assertEquals("DescribeTable 'life.t': table not found (server said: Table 'life$t' not "
        + "found) [HTTP 404]", missing.getMessage());
    assertThrows(TableNotFoundException.class, () -> client.dropTable(new DropTableRequest()
        .id(id)));
  }

  @Test
  void declaredTableIsListedAndDescribedButHasNoData() {
    createNs("decl");
    List<String> id = List.of("decl", "d");
    var declared =
        client.declareTable(new DeclareTableRequest().id(id).properties(Map.of("k", "v")));
    assertTrue(declared.getLocation().endsWith("decl$d"), declared.getLocation());
    // The dir server leaves is_only_declared null even with check_declared=true.
    DescribeTableResponse d = client.describeTable(new DescribeTableRequest().id(id)
        .checkDeclared(true));
    assertEquals(declared.getLocation(), d.getLocation());
    assertNull(d.getVersion());
    assertThrows(TableAlreadyExistsException.class,
        () -> client.declareTable(new DeclareTableRequest().id(id)));
    assertEquals(List.of("d"), client.listTables(new ListTablesRequest().id(List.of("decl"))
        .includeDeclared(true)).getTables());
  }

  @Test
  void listingFollowsPagesWithASmallLimit() {
    createNs("paged");
    for (int i = 0; i < 5; i++) {
      createNs("paged", "c" + i);
      createTable(List.of("paged", "t" + i), 1);
    }
    // The dir server ignores 'limit' and answers everything, newest first, in one page.
    ListTablesResponse page = client.listTables(new ListTablesRequest().id(List.of("paged"))
        .limit(2L));
    assertEquals(List.of("t4", "t3", "t2", "t1", "t0"), page.getTables());
    assertNull(page.getPageToken());
    assertEquals(page.getTables(), client.listAllTables(List.of("paged")).toList());

    ListNamespacesResponse first = client.listNamespaces(
        new ListNamespacesRequest().id(List.of("paged")).limit(2L));
    assertEquals(5, first.getNamespaces().size(), first.getNamespaces().toString());
    assertEquals(java.util.Set.copyOf(first.getNamespaces()),
        java.util.Set.copyOf(client.listAllNamespaces(List.of("paged")).toList()));
  }

  @Test
  void operationsTheDirServerLacksAreUnsupportedNotNotFound() {
    createNs("unsup");
    List<String> id = List.of("unsup", "t");
    createTable(id, 1);
    UnsupportedOperationByServerException rename =
        assertThrows(UnsupportedOperationByServerException.class, () -> client.renameTable(
            new RenameTableRequest().id(id).newTableName("t2")));
    assertTrue(rename.getMessage().startsWith(
        "RenameTable 'unsup.t': the server does not support this operation"), rename.getMessage());
    assertThrows(UnsupportedOperationByServerException.class,
        () -> client.updateTableSchemaMetadata(
            new UpdateTableSchemaMetadataRequest().id(id).metadata(Map.of("a", "b"))));
    assertThrows(UnsupportedOperationByServerException.class,
        () -> client.listAllTables(new ListAllTablesRequest(null, null, null)));
    // Served as GET by this server although the spec says POST: answered 405.
    assertThrows(UnsupportedOperationByServerException.class,
        () -> client.countTableRows(new CountTableRowsRequest().id(id)));
    assertThrows(UnsupportedOperationByServerException.class,
        () -> client.getTableStats(new GetTableStatsRequest().id(id)));
    assertThrows(UnsupportedOperationByServerException.class,
        () -> client.listTableTags(new ListTableTagsRequest().id(id)));
    assertThrows(UnsupportedOperationByServerException.class,
        () -> client.listAllTableIndices(id).toList());
    assertThrows(UnsupportedOperationByServerException.class,
        () -> client.listAllTableBranches(id));
    assertThrows(UnsupportedOperationByServerException.class,
        () -> client.createTableScalarIndex(new CreateTableIndexRequest().id(id)
            .column("id").indexType("BTREE")));
    try (VectorSchemaRoot empty = VectorSchemaRoot.create(SCHEMA, allocator)) {
      empty.setRowCount(0);
      assertThrows(UnsupportedOperationByServerException.class, () -> client.insertIntoTable(
          new InsertIntoTableRequest().id(id).mode("append"), empty));
    }
    assertThrows(UnsupportedOperationByServerException.class, () -> client.queryTable(
        new QueryTableRequest().id(id).k(10L).filter("id >= 0")
            .vector(new QueryTableRequestVector().singleVector(List.of())), allocator));
    assertThrows(UnsupportedOperationByServerException.class, () -> client.createTableTag(
        new CreateTableTagRequest().id(id).tag("v1").version(1L)));
    UnsupportedOperationByServerException mv =
        assertThrows(UnsupportedOperationByServerException.class,
            () -> client.createMaterializedView(new CreateMaterializedViewRequest().id(
                List.of("unsup", "mv")).kind(CreateMaterializedViewRequest.KindEnum.QUERY)
                    .sourceQuery("SELECT 1")
                .outputSchema("{}")));
    assertTrue(mv.getMessage().contains("the server has no route for this operation"),
        mv.getMessage());
    assertThrows(UnsupportedOperationByServerException.class,
        () -> client.refreshMaterializedView(
            new RefreshMaterializedViewRequest().id(List.of("unsup", "mv"))));
  }
}
