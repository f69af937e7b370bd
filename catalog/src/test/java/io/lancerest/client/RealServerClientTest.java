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
import io.lancerest.client.model.QueryVector;
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
    client.createNamespace(new CreateNamespaceRequest(List.of(id), null, null));
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
      return client.createTable(new CreateTableRequest(id, null, null, null), root);
    }
  }

  @Test
  void namespacesNestThreeDeepWithProperties() {
    createNs("n1");
    createNs("n1", "n2");
    client.createNamespace(
        new CreateNamespaceRequest(List.of("n1", "n2", "n3"), null, Map.of("owner", "ann")));

    assertEquals(Map.of("owner", "ann"),
        client.describeNamespace(new DescribeNamespaceRequest(List.of("n1", "n2", "n3")))
            .properties());
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
        () -> client.dropNamespace(new DropNamespaceRequest(List.of("n1", "n2"), null, null)));
    assertTrue(notEmpty.getMessage().contains("namespace is not empty"), notEmpty.getMessage());
    // The dir server refuses Cascade as well: a catalog promising CASCADE must drop children.
    assertThrows(NamespaceNotEmptyException.class, () -> client.dropNamespace(
        new DropNamespaceRequest(List.of("n1", "n2"), null, "Cascade")));

    client.dropNamespace(new DropNamespaceRequest(List.of("n1", "n2", "n3"), null, null));
    assertFalse(client.namespaceExists(List.of("n1", "n2", "n3")));
    NamespaceNotFoundException gone = assertThrows(NamespaceNotFoundException.class,
        () -> client.dropNamespace(new DropNamespaceRequest(List.of("n1", "n2", "n3"), null,
            null)));
    assertTrue(gone.getMessage().startsWith("DropNamespace 'n1.n2.n3': namespace not found"),
        gone.getMessage());
    assertThrows(NamespaceNotFoundException.class, () -> client.describeNamespace(
        new DescribeNamespaceRequest(List.of("n1", "n2", "n3"))));
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
    DescribeTableResponse d = client.describeTable(DescribeTableRequest.of(table));
    assertEquals("t 1%/é", d.table());
    assertEquals(odd, d.namespace());
    assertTrue(client.tableExists(table));
  }

  @Test
  void aNameContainingTheDelimiterIsRefusedBeforeAnyCall() {
    ClientConfigException e = assertThrows(ClientConfigException.class,
        () -> client.describeTable(DescribeTableRequest.of(List.of("ns", "a$b"))));
    assertTrue(e.getMessage().contains("contains the namespace delimiter '$'"), e.getMessage());
  }

  @Test
  void tableLifecycleCreateDescribeVersionsDeregisterRegisterDrop() {
    createNs("life");
    List<String> id = List.of("life", "t");
    CreateTableResponse created = createTable(id, 3);
    assertEquals(1L, created.version());
    assertTrue(created.location().endsWith("life$t"), created.location());

    TableAlreadyExistsException dup =
        assertThrows(TableAlreadyExistsException.class, () -> createTable(id, 1));
    assertTrue(dup.getMessage().startsWith("CreateTable 'life.t': table already exists"),
        dup.getMessage());

    DescribeTableResponse plain = client.describeTable(DescribeTableRequest.of(id));
    assertEquals(created.location(), plain.location());
    DescribeTableResponse detailed = client.describeTable(new DescribeTableRequest(
        id, null, null, null, true, true, true, null, null, null));
    assertEquals(1L, detailed.version());
    assertEquals(SCHEMA, JsonArrowSchemas.toArrow(detailed.schema()));
    assertNotNull(detailed.tableUri());
    assertEquals(1L, client.describeTable(DescribeTableRequest.of(id).withVersion(1L)
        .withLoadDetailedMetadata(true)).version());

    List<TableVersion> versions = client.listAllTableVersions(id).toList();
    assertEquals(List.of(1L), versions.stream().map(TableVersion::version).toList());
    assertTrue(versions.get(0).manifestPath().contains("_versions"));

    assertTrue(client.tableExists(id));
    assertFalse(client.tableExists(List.of("life", "missing")));
    assertFalse(client.tableExists(List.of("no_such_ns", "missing")));

    // Deregister forgets the table, register brings the same data back.
    var dereg = client.deregisterTable(new DeregisterTableRequest(id));
    assertFalse(client.tableExists(id));
    String relative = server.rootDir().toUri().relativize(
        java.net.URI.create(dereg.location())).toString();
    var reg = client.registerTable(new RegisterTableRequest(id, relative, null, null));
    assertTrue(reg.location().endsWith("life$t"), reg.location());
    assertEquals(1L, client.describeTable(new DescribeTableRequest(
        id, null, null, null, null, true, null, null, null, null)).version());

    DropTableResponse dropped = client.dropTable(new DropTableRequest(id));
    assertEquals(id, dropped.id());
    TableNotFoundException missing = assertThrows(TableNotFoundException.class,
        () -> client.describeTable(DescribeTableRequest.of(id)));
    assertEquals("DescribeTable 'life.t': table not found (server said: Table 'life$t' not "
        + "found) [HTTP 404]", missing.getMessage());
    assertThrows(TableNotFoundException.class, () -> client.dropTable(new DropTableRequest(id)));
  }

  @Test
  void declaredTableIsListedAndDescribedButHasNoData() {
    createNs("decl");
    List<String> id = List.of("decl", "d");
    var declared =
        client.declareTable(new DeclareTableRequest(id, null, null, Map.of("k", "v")));
    assertTrue(declared.location().endsWith("decl$d"), declared.location());
    // The dir server leaves is_only_declared null even with check_declared=true.
    DescribeTableResponse d = client.describeTable(new DescribeTableRequest(
        id, null, null, null, null, null, true, null, null, null));
    assertEquals(declared.location(), d.location());
    assertNull(d.version());
    assertThrows(TableAlreadyExistsException.class,
        () -> client.declareTable(new DeclareTableRequest(id, null, null, null)));
    assertEquals(List.of("d"), client.listTables(new ListTablesRequest(
        List.of("decl"), null, null, true, null, null)).tables());
  }

  @Test
  void listingFollowsPagesWithASmallLimit() {
    createNs("paged");
    for (int i = 0; i < 5; i++) {
      createNs("paged", "c" + i);
      createTable(List.of("paged", "t" + i), 1);
    }
    // The dir server ignores 'limit' and answers everything, newest first, in one page.
    ListTablesResponse page = client.listTables(new ListTablesRequest(List.of("paged"), null, 2));
    assertEquals(List.of("t4", "t3", "t2", "t1", "t0"), page.tables());
    assertNull(page.pageToken());
    assertEquals(page.tables(), client.listAllTables(List.of("paged")).toList());

    ListNamespacesResponse first = client.listNamespaces(
        new ListNamespacesRequest(List.of("paged"), null, 2));
    assertEquals(5, first.namespaces().size(), first.namespaces().toString());
    assertEquals(java.util.Set.copyOf(first.namespaces()),
        java.util.Set.copyOf(client.listAllNamespaces(List.of("paged")).toList()));
  }

  @Test
  void operationsTheDirServerLacksAreUnsupportedNotNotFound() {
    createNs("unsup");
    List<String> id = List.of("unsup", "t");
    createTable(id, 1);
    UnsupportedOperationByServerException rename =
        assertThrows(UnsupportedOperationByServerException.class, () -> client.renameTable(
            new RenameTableRequest(id, "t2", null)));
    assertTrue(rename.getMessage().startsWith(
        "RenameTable 'unsup.t': the server does not support this operation"), rename.getMessage());
    assertThrows(UnsupportedOperationByServerException.class,
        () -> client.updateTableSchemaMetadata(
            new UpdateTableSchemaMetadataRequest(id, null, Map.of("a", "b"))));
    assertThrows(UnsupportedOperationByServerException.class,
        () -> client.listAllTables(new ListAllTablesRequest(null, null, null)));
    // Served as GET by this server although the spec says POST: answered 405.
    assertThrows(UnsupportedOperationByServerException.class,
        () -> client.countTableRows(new CountTableRowsRequest(id, null, null, null)));
    assertThrows(UnsupportedOperationByServerException.class,
        () -> client.getTableStats(new GetTableStatsRequest(id, null)));
    assertThrows(UnsupportedOperationByServerException.class,
        () -> client.listTableTags(new ListTableTagsRequest(id, null, null)));
    assertThrows(UnsupportedOperationByServerException.class,
        () -> client.listAllTableIndices(id).toList());
    assertThrows(UnsupportedOperationByServerException.class,
        () -> client.listAllTableBranches(id));
    assertThrows(UnsupportedOperationByServerException.class,
        () -> client.createTableScalarIndex(CreateTableIndexRequest.builder(id)
            .column("id").indexType("BTREE").build()));
    try (VectorSchemaRoot empty = VectorSchemaRoot.create(SCHEMA, allocator)) {
      empty.setRowCount(0);
      assertThrows(UnsupportedOperationByServerException.class, () -> client.insertIntoTable(
          new InsertIntoTableRequest(id, null, "append"), empty));
    }
    assertThrows(UnsupportedOperationByServerException.class, () -> client.queryTable(
        QueryTableRequest.builder(id).k(10).filter("id >= 0")
            .vector(new QueryVector(List.of(), null)).build(), allocator));
    assertThrows(UnsupportedOperationByServerException.class, () -> client.createTableTag(
        new CreateTableTagRequest(id, "v1", 1L, null)));
    UnsupportedOperationByServerException mv =
        assertThrows(UnsupportedOperationByServerException.class,
            () -> client.createMaterializedView(CreateMaterializedViewRequest.builder(
                List.of("unsup", "mv")).kind("query").sourceQuery("SELECT 1")
                .outputSchema("{}").build()));
    assertTrue(mv.getMessage().contains("the server has no route for this operation"),
        mv.getMessage());
    assertThrows(UnsupportedOperationByServerException.class,
        () -> client.refreshMaterializedView(
            RefreshMaterializedViewRequest.builder(List.of("unsup", "mv")).build()));
  }
}
