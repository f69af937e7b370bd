package io.lancerest.spark.connector;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.lance.io.StorageOptionsProvider;

/** A location resolved once carries one provider to every open, and never shows its secrets. */
class LanceLocationTest {
  private static final long IN_AN_HOUR = System.currentTimeMillis() + 3_600_000;

  /** Vended credentials that expire, with the route that renews them through a REST server. */
  private static Map<String, String> vended() {
    return CredentialRefresh.withRoute(Map.of("aws_secret_access_key", "s3cr3t",
        CredentialRefresh.EXPIRES_AT, Long.toString(IN_AN_HOUR)), "rest",
        Map.of("uri", "http://127.0.0.1:9"), List.of("ns", "t"));
  }

  private static StorageOptionsProvider providerOf(LanceLocation l) {
    return l.readOptions().build().getStorageOptionsProvider().orElse(null);
  }

  @Test
  void everyOpenOfAResolvedTableSharesItsOneProvider() {
    LanceLocation t = LanceLocation.of("s3://b/ns/t.lance", vended());
    StorageOptionsProvider p = providerOf(t);
    assertTrue(p != null, "expiring credentials with a route get a provider");
    assertSame(p, providerOf(t), "a second open uses the same provider");
    assertSame(p, providerOf(t.sibling("s3://b/ns/t__errors.lance")),
        "a table next to it under the same credentials uses the same provider");
    assertFalse(providerOf(LanceLocation.of("s3://b/ns/t.lance", vended())) == p,
        "resolving the table again builds another one: what passing the location down avoids");
  }

  @Test
  void credentialsThatDoNotExpireNeedNoProvider() {
    LanceLocation t = LanceLocation.of("/tmp/t.lance", Map.of("k", "v"));
    assertEquals(null, providerOf(t));
    assertSame(t.storageOptions(), t.current(), "nothing to renew");
  }

  @Test
  void aLocationAsLogsShowItMasksTheCredentialsOfASignedUrl() {
    assertEquals("s3://***@bucket/t.lance",
        LanceLocation.shown("s3://AKIA:secret@bucket/t.lance"));
    assertEquals("https://store.example/t.lance?***",
        LanceLocation.shown("https://store.example/t.lance?sig=abc&se=2026"));
    assertEquals("file:///tmp/a@b/t.lance", LanceLocation.shown("file:///tmp/a@b/t.lance"));
    assertEquals("s3a://***@bucket/x", LanceLocation.shown("s3a://AKIA:abc/def@bucket/x"));
    assertEquals("https://host:8080/p?***", LanceLocation.shown("https://host:8080/p?x=a@b"));
    String shown = LanceLocation.of("s3://k:s@bucket/t.lance?token=xyz", Map.of()).toString();
    assertFalse(shown.contains("s@") || shown.contains("xyz"), shown);
  }

  @Test
  void toStringShowsTheStorageOptionKeysOnly() {
    String s = LanceLocation.of("s3://b/ns/t.lance", vended()).toString();
    assertTrue(s.contains("s3://b/ns/t.lance") && s.contains("aws_secret_access_key"), s);
    assertFalse(s.contains("s3cr3t"), s);
  }
}
