package io.lancerest.examples;

import io.lancerest.client.LanceRestClient;
import io.lancerest.client.error.LanceRestException;
import io.lancerest.client.error.TableNotFoundException;
import io.lancerest.client.error.UnsupportedOperationByServerException;
import io.lancerest.client.model.CountTableRowsRequest;
import io.lancerest.client.model.CreateNamespaceRequest;
import io.lancerest.client.model.CreateTableRequest;
import io.lancerest.client.model.DescribeNamespaceRequest;
import io.lancerest.client.model.DescribeTableRequest;
import io.lancerest.client.model.DescribeTableResponse;
import io.lancerest.client.model.DropNamespaceRequest;
import io.lancerest.client.model.DropTableRequest;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.lance.namespace.RestAdapter;

/**
 * The REST client on its own, without Spark: namespaces, a table created from Arrow rows, its
 * metadata and versions, typed errors, and clean-up.
 *
 * <p>Usage: {@code RestClientExample [--uri URL]}. Without {@code --uri} it starts the embedded
 * server on {@code target/examples-warehouse/rest-client} (reset on every run).
 */
public final class RestClientExample {
  private RestClientExample() {}

  public static void main(String[] args) throws Exception {
    String uri = args.length >= 2 && args[0].equals("--uri") ? args[1] : null;
    RestAdapter server = null;
    if (uri == null) {
      Path root = Path.of("target/examples-warehouse/rest-client").toAbsolutePath();
      Quickstart.resetWarehouse(root, false);
      server = new RestAdapter("dir", Map.of("root", root.toString()), "127.0.0.1", 0);
      server.start();
      uri = "http://127.0.0.1:" + server.getPort();
      System.out.println("embedded server on " + uri);
    }
    // Any option of docs/configuration.md goes in this map (token, header.*, retry.*, ...).
    try (LanceRestClient client = LanceRestClient.create(Map.of("uri", uri,
             "retry.max-attempts", "3"));
         BufferAllocator allocator = new RootAllocator()) {
      run(client, allocator);
    } finally {
      if (server != null) {
        server.close();
      }
    }
  }

  static void run(LanceRestClient client, BufferAllocator allocator) {
    List<String> ns = List.of("client_demo");
    List<String> table = List.of("client_demo", "points");

    client.createNamespace(new CreateNamespaceRequest().id(ns)
        .properties(Map.of("owner", "examples")));
    System.out.println("namespace exists: " + client.namespaceExists(ns));
    System.out.println("namespace properties: "
        + client.describeNamespace(new DescribeNamespaceRequest().id(ns)).getProperties());
    System.out.println("top-level namespaces: " + client.listAllNamespaces(List.of()).toList());

    Schema schema = new Schema(List.of(
        new Field("id", FieldType.notNullable(new ArrowType.Int(64, true)), null),
        new Field("name", FieldType.nullable(new ArrowType.Utf8()), null)));
    // CreateTable carries the first rows as an Arrow IPC stream.
    try (VectorSchemaRoot rows = Quickstart.rows(schema, allocator, new long[] {1, 2},
        new String[] {"alpha", "beta"})) {
      client.createTable(new CreateTableRequest().id(table), rows);
    }
    DescribeTableResponse d = client.describeTable(
        new DescribeTableRequest().id(table).loadDetailedMetadata(true));
    System.out.println("table " + String.join(".", table) + ": version " + d.getVersion()
        + ", location " + d.getLocation());
    System.out.println("tables in client_demo: " + client.listAllTables(ns).toList());
    System.out.println("versions: " + client.listAllTableVersions(table)
        .map(v -> "v" + v.getVersion()).toList());

    // Errors are typed: catch the specific class, or LanceRestException for all server errors.
    try {
      client.describeTable(new DescribeTableRequest().id(List.of("client_demo", "missing")));
    } catch (TableNotFoundException e) {
      System.out.println("expected TableNotFoundException: code=" + e.code() + " http="
          + e.httpStatus() + " operation=" + e.operation().specName() + " message="
          + e.getMessage());
    }
    try {
      client.countTableRows(new CountTableRowsRequest().id(table));
    } catch (UnsupportedOperationByServerException e) {
      System.out.println("expected on the dir server: " + e.getMessage());
    } catch (LanceRestException e) {
      System.out.println("server error: " + e.getMessage());
    }

    client.dropTable(new DropTableRequest().id(table));
    client.dropNamespace(new DropNamespaceRequest().id(ns));
    System.out.println("dropped; namespace exists: " + client.namespaceExists(ns));
  }
}
