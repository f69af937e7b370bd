package io.lancerest.bench;

import io.lancerest.client.LanceRestClient;
import io.lancerest.client.model.CreateNamespaceRequest;
import io.lancerest.client.model.CreateTableRequest;
import io.lancerest.client.model.DescribeTableRequest;
import io.lancerest.client.model.ListTablesRequest;
import io.lancerest.client.testing.RestServerFixture;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.IntConsumer;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.lance.namespace.RestNamespace;

/**
 * Metadata-call throughput of our client against lance-core's own JNI {@code RestNamespace}, on
 * one in-process RestAdapter: each iteration is one DescribeTable and one ListTables.
 *
 * <p>Method, because the machines this runs on are often shared and loaded:
 * <ul>
 *   <li>a long warm-up of both clients, interleaved (at least 3000 iterations and 15 s): under
 *       load the JIT compiles the JSON code paths late, and a short warm-up measures our client
 *       half-interpreted against the peer's native code;
 *   <li>then the two clients take turns call by call (who goes first alternates), so changes of
 *       load hit both alike; every iteration is timed;
 *   <li>reported: per client the best and median round, and the median iteration; the ratios
 *       ours/peer of the median round, the best rounds and the median iterations.
 * </ul>
 * Not a test (no pass/fail). Run it, after {@code mvn -q install -DskipTests} once, with
 *
 * <pre>
 * mvn -o -q -pl catalog test-compile exec:exec -Dexec.classpathScope=test \
 *   -Dexec.executable=java -Dexec.args="--add-opens=java.base/java.nio=ALL-UNNAMED \
 *   -cp %classpath io.lancerest.bench.ClientBenchmark [iterations-per-round rounds warmup-s]"
 * </pre>
 *
 * ({@code exec:exec} forks a JVM of its own, so neither Maven's heap nor its JIT state, nor a
 * MAVEN_OPTS setting, affects the figures; Arrow needs the one {@code --add-opens}.)
 */
public final class ClientBenchmark {
  private static final int TABLES = 10;

  private ClientBenchmark() {}

  public static void main(String[] args) throws Exception {
    int n = args.length > 0 ? Integer.parseInt(args[0]) : 200;
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 10;
    int warmupSeconds = args.length > 2 ? Integer.parseInt(args[2]) : 15;
    try (RestServerFixture server = RestServerFixture.start();
        BufferAllocator allocator = new RootAllocator();
        LanceRestClient ours = server.newClient();
        RestNamespace peer = new RestNamespace()) {
      peer.initialize(Map.of("uri", server.uri()), allocator);
      List<List<String>> tables = setUp(ours, allocator);

      IntConsumer oursCall = i -> {
        ours.describeTable(new DescribeTableRequest().id(tables.get(i % TABLES)));
        ours.listTables(new ListTablesRequest().id(List.of("bench")));
      };
      IntConsumer peerCall = i -> {
        peer.describeTable(new org.lance.namespace.model.DescribeTableRequest()
            .id(tables.get(i % TABLES)));
        peer.listTables(new org.lance.namespace.model.ListTablesRequest().id(List.of("bench")));
      };

      long warmEnd = System.nanoTime() + TimeUnit.SECONDS.toNanos(warmupSeconds);
      int warmed = 0;
      while (System.nanoTime() < warmEnd || warmed < 3000) {
        oursCall.accept(warmed);
        peerCall.accept(warmed);
        warmed++;
      }

      double[] oursNs = new double[rounds];
      double[] peerNs = new double[rounds];
      double[] ratio = new double[rounds];
      long[] oursIt = new long[rounds * n];
      long[] peerIt = new long[rounds * n];
      for (int r = 0; r < rounds; r++) {
        // Call by call, alternating who goes first: load changes hit both clients alike.
        for (int i = 0; i < n; i++) {
          int k = r * n + i;
          if ((i + r) % 2 == 0) {
            oursIt[k] = time(oursCall, i);
            peerIt[k] = time(peerCall, i);
          } else {
            peerIt[k] = time(peerCall, i);
            oursIt[k] = time(oursCall, i);
          }
          oursNs[r] += oursIt[k];
          peerNs[r] += peerIt[k];
        }
        ratio[r] = oursNs[r] / peerNs[r];
      }
      int calls = 2 * n;
      System.out.printf("warm-up: %d iterations per client (>= %d s); then %d rounds of %d calls"
          + " per client (%d DescribeTable + %d ListTables), interleaved call by call%n",
          warmed, warmupSeconds, rounds, calls, n, n);
      report("ours (OkHttp client)", oursNs, oursIt, calls);
      report("peer (lance-core JNI)", peerNs, peerIt, calls);
      System.out.printf("ratio ours/peer time: median of rounds %.3f, best round/best round %.3f,"
          + " median iteration/median iteration %.3f (target <= 1.0)%n",
          median(ratio), min(oursNs) / min(peerNs),
          median(toDouble(oursIt)) / median(toDouble(peerIt)));
    }
  }

  private static void report(String who, double[] roundNs, long[] iterationNs, int calls) {
    System.out.printf("%-22s rounds: best %6.0f calls/s, median %6.0f calls/s;"
        + " per call: median %.3f ms%n", who, calls / (min(roundNs) / 1e9),
        calls / (median(roundNs) / 1e9), median(toDouble(iterationNs)) / 2 / 1e6);
  }

  private static double[] toDouble(long[] v) {
    return Arrays.stream(v).asDoubleStream().toArray();
  }

  private static double min(double[] v) {
    return Arrays.stream(v).min().orElseThrow();
  }

  private static double median(double[] v) {
    double[] s = v.clone();
    Arrays.sort(s);
    return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  }

  private static List<List<String>> setUp(LanceRestClient client, BufferAllocator allocator) {
    client.createNamespace(new CreateNamespaceRequest().id(List.of("bench")));
    Schema schema = new Schema(List.of(Field.nullable("id", new ArrowType.Int(32, true))));
    List<List<String>> ids = new ArrayList<>();
    try (VectorSchemaRoot empty = VectorSchemaRoot.create(schema, allocator)) {
      empty.setRowCount(0);
      for (int t = 0; t < TABLES; t++) {
        List<String> id = List.of("bench", "t" + t);
        client.createTable(new CreateTableRequest().id(id), empty);
        ids.add(id);
      }
    }
    return ids;
  }

  private static long time(IntConsumer call, int i) {
    long start = System.nanoTime();
    call.accept(i);
    return System.nanoTime() - start;
  }
}
