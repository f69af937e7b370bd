package io.lancerest.spark.catalog;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.lancerest.client.testing.S3ProxyFixture;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.lance.CommitBuilder;
import org.lance.Dataset;
import org.lance.Fragment;
import org.lance.FragmentMetadata;
import org.lance.ReadOptions;
import org.lance.Transaction;
import org.lance.operation.Append;
import org.lance.operation.Overwrite;

/**
 * What lance-core 4.0.0's S3 commit relies on, shown on s3proxy. A writer that read an older
 * version is rebased: lance-core looks for newer versions before it writes its manifest, so two
 * appends that both read version 1, one after the other, keep both rows (version 3) on S3 as on
 * a local folder. Two commits in the same instant are told apart only by the manifest's
 * conditional PUT ({@code If-None-Match: *}, object_store's create mode): the store must refuse
 * the second PUT of an existing key. s3proxy 2.6.0 does not (second test), so it cannot show
 * that race; AWS S3, MinIO and R2 refuse it with 412.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ObjectStoreCommitTest {
  private static final Schema SCHEMA = new Schema(List.of(
      Field.nullable("id", new ArrowType.Int(64, true))));
  private S3ProxyFixture s3;
  private Path localDir;

  @BeforeAll
  void start() throws Exception {
    s3 = S3ProxyFixture.start();
    localDir = Files.createTempDirectory("commit-race");
  }

  @AfterAll
  void stop() {
    if (s3 != null) {
      s3.close();
    }
    S3ProxyFixture.deleteTree(localDir);
  }

  /** Rows and latest version after two appends that both read version 1. */
  private static List<Long> staleAppends(String uri, Map<String, String> storage) {
    try (BufferAllocator a = new RootAllocator()) {
      try (Transaction t = new Transaction.Builder().operation(
              Overwrite.builder().fragments(List.of()).schema(SCHEMA).build()).build();
          Dataset created = new CommitBuilder(uri, a).writeParams(storage).execute(t)) {
        assertEquals(1, created.version());
      }
      ReadOptions ro = new ReadOptions.Builder().setStorageOptions(storage).build();
      try (Dataset first = Dataset.open(a, uri, ro);
          Dataset second = Dataset.open(a, uri, ro)) {
        append(a, first, uri, storage, 1);
        append(a, second, uri, storage, 2);
      }
      try (Dataset latest = Dataset.open(a, uri, ro)) {
        return List.of(latest.countRows(), latest.version());
      }
    }
  }

  private static void append(BufferAllocator a, Dataset readAt, String uri,
      Map<String, String> storage, long id) {
    List<FragmentMetadata> fragments;
    try (VectorSchemaRoot root = VectorSchemaRoot.create(SCHEMA, a)) {
      BigIntVector v = (BigIntVector) root.getVector("id");
      v.allocateNew(1);
      v.set(0, id);
      root.setRowCount(1);
      fragments = Fragment.write().datasetUri(uri).allocator(a).data(root)
          .storageOptions(storage).execute();
    }
    try (Transaction t = new Transaction.Builder().readVersion(readAt.version())
        .operation(Append.builder().fragments(fragments).build()).build()) {
      new CommitBuilder(readAt).execute(t).close();
    }
  }

  @Test
  void aStaleCommitIsRebasedLocallyAndLostOnAStoreWithoutConditionalPut() {
    assertEquals(List.of(2L, 3L), staleAppends(localDir.resolve("t.lance").toString(), Map.of()),
        "local folder: the second append retried as version 3, both rows kept");
    assertEquals(List.of(2L, 3L), staleAppends(s3.uri("race/t.lance"), s3.storageOptions()),
        "S3: the second append found version 2 before its PUT and retried as version 3");
  }

  @Test
  void s3proxyIgnoresIfNoneMatchOnPut() throws Exception {
    assertEquals(200, put("probe/k", "one"));
    assertEquals(200, put("probe/k", "two"),
        "a store with conditional writes answers 412 to the second PUT");
    assertEquals("two", Files.readString(s3.bucketDir().resolve("probe/k")),
        "the second PUT replaced the object");
  }

  /** A PUT with {@code If-None-Match: *}, signed with AWS signature version 2. */
  private int put(String key, String body) throws Exception {
    String date = java.time.format.DateTimeFormatter.RFC_1123_DATE_TIME.format(
        java.time.ZonedDateTime.now(java.time.ZoneOffset.UTC));
    String type = "application/octet-stream";
    String toSign = "PUT\n\n" + type + "\n" + date + "\n/" + S3ProxyFixture.BUCKET + "/" + key;
    javax.crypto.Mac mac = javax.crypto.Mac.getInstance("HmacSHA1");
    mac.init(new javax.crypto.spec.SecretKeySpec(
        S3ProxyFixture.SECRET_KEY.getBytes(java.nio.charset.StandardCharsets.UTF_8), "HmacSHA1"));
    String sig = java.util.Base64.getEncoder().encodeToString(
        mac.doFinal(toSign.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
    java.net.http.HttpRequest req = java.net.http.HttpRequest.newBuilder(java.net.URI.create(
            s3.endpoint() + "/" + S3ProxyFixture.BUCKET + "/" + key))
        .timeout(java.time.Duration.ofSeconds(20))
        .header("Date", date)
        .header("Content-Type", type)
        .header("If-None-Match", "*")
        .header("Authorization", "AWS " + S3ProxyFixture.ACCESS_KEY + ":" + sig)
        .PUT(java.net.http.HttpRequest.BodyPublishers.ofString(body))
        .build();
    return java.net.http.HttpClient.newBuilder()
        .connectTimeout(java.time.Duration.ofSeconds(5)).build()
        .send(req, java.net.http.HttpResponse.BodyHandlers.discarding()).statusCode();
  }
}
