package io.lancerest.bench;

import io.lancerest.client.LanceRestClient;
import io.lancerest.client.model.CreateNamespaceRequest;
import io.lancerest.client.model.CreateTableRequest;
import io.lancerest.client.model.DescribeTableRequest;
import io.lancerest.client.model.ListTablesRequest;
import io.lancerest.client.testing.RestServerFixture;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.IntConsumer;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.lance.namespace.RestNamespace;

/**
 * Metadata-call throughput of our client against lance-core's own JNI {@code RestNamespace},
 * on one in-process RestAdapter: N DescribeTable + N ListTables calls each, after a warm-up,
 * in alternating rounds. Not a test (no pass/fail); run it with
 *
 * <pre>
 * MAVEN_OPTS="--add-opens=java.base/java.nio=ALL-UNNAMED" mvn -o -q -pl catalog test-compile \
 *   exec:java -Dexec.classpathScope=test -Dexec.mainClass=io.lancerest.bench.ClientBenchmark \
 *   [-Dexec.args="2000"]
 * </pre>
 */
public final class ClientBenchmark {
  private static final int TABLES = 10;
  private static final int ROUNDS = 3;

  private ClientBenchmark() {}

  public static void main(String[] args) throws Exception {
    int n = args.length > 0 ? Integer.parseInt(args[0]) : 2000;
    try (RestServerFixture server = RestServerFixture.start();
        BufferAllocator allocator = new RootAllocator();
        LanceRestClient ours = server.newClient();
        RestNamespace peer = new RestNamespace()) {
      peer.initialize(Map.of("uri", server.uri()), allocator);
      List<List<String>> tables = setUp(ours, allocator);

      IntConsumer oursCall = i -> {
        ours.describeTable(DescribeTableRequest.of(tables.get(i % TABLES)));
        ours.listTables(new ListTablesRequest(List.of("bench"), null, null));
      };
      IntConsumer peerCall = i -> {
        peer.describeTable(new org.lance.namespace.model.DescribeTableRequest()
            .id(tables.get(i % TABLES)));
        peer.listTables(new org.lance.namespace.model.ListTablesRequest().id(List.of("bench")));
      };
      // Warm-up: JIT, connection pools, the server's caches.
      run(oursCall, n / 4);
      run(peerCall, n / 4);

      long bestOurs = Long.MAX_VALUE;
      long bestPeer = Long.MAX_VALUE;
      for (int r = 0; r < ROUNDS; r++) {
        // Alternate who goes first so that neither always meets a warmer server.
        if (r % 2 == 0) {
          bestOurs = Math.min(bestOurs, run(oursCall, n));
          bestPeer = Math.min(bestPeer, run(peerCall, n));
        } else {
          bestPeer = Math.min(bestPeer, run(peerCall, n));
          bestOurs = Math.min(bestOurs, run(oursCall, n));
        }
      }
      int calls = 2 * n;
      System.out.printf("calls per client per round: %d (%d DescribeTable + %d ListTables),"
          + " best of %d rounds%n", calls, n, n, ROUNDS);
      System.out.printf("ours (OkHttp client):      %8.0f calls/s  (%.3f ms)%n",
          calls / (bestOurs / 1e9), bestOurs / 1e6);
      System.out.printf("peer (lance-core JNI):     %8.0f calls/s  (%.3f ms)%n",
          calls / (bestPeer / 1e9), bestPeer / 1e6);
      System.out.printf("ratio ours_time/peer_time: %.3f (target <= 1.0)%n",
          (double) bestOurs / bestPeer);
    }
  }

  private static List<List<String>> setUp(LanceRestClient client, BufferAllocator allocator) {
    client.createNamespace(new CreateNamespaceRequest(List.of("bench"), null, null));
    Schema schema = new Schema(List.of(Field.nullable("id", new ArrowType.Int(32, true))));
    List<List<String>> ids = new ArrayList<>();
    try (VectorSchemaRoot empty = VectorSchemaRoot.create(schema, allocator)) {
      empty.setRowCount(0);
      for (int t = 0; t < TABLES; t++) {
        List<String> id = List.of("bench", "t" + t);
        client.createTable(new CreateTableRequest(id, null, null, null), empty);
        ids.add(id);
      }
    }
    return ids;
  }

  private static long run(IntConsumer call, int n) {
    long start = System.nanoTime();
    for (int i = 0; i < n; i++) {
      call.accept(i);
    }
    return System.nanoTime() - start;
  }
}
