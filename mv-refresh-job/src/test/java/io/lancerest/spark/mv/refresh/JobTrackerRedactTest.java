package io.lancerest.spark.mv.refresh;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** What a job record's message keeps of an error that quotes credentials. */
class JobTrackerRedactTest {
  @Test
  void secretsOfTheCommonStoresAreMasked() {
    assertEquals("token=*** then", JobTracker.redact("token=abc then"));
    assertEquals("Authorization: *** x", JobTracker.redact("Authorization: Bearer t0k x"));
    assertEquals("azure_storage_account_key=*** at", JobTracker.redact(
        "azure_storage_account_key=QmFzZTY0 at"));
    assertEquals("{\"private_key\": \"***\"}", JobTracker.redact(
        "{\"private_key\": \"-----BEGIN\"}"));
    assertEquals("https://a.blob/x?sv=1&sig=***&se=2", JobTracker.redact(
        "https://a.blob/x?sv=1&sig=c2lnbmF0dXJl&se=2"));
    assertEquals("aws_secret_access_key=*** region=us", JobTracker.redact(
        "aws_secret_access_key=wJalr region=us"));
    assertEquals("at 's3://***@bucket/t.lance' and 'az://***@c/t'", JobTracker.redact(
        "at 's3://AKIAKEY:wJalrSecret@bucket/t.lance' and 'az://acct:key@c/t'"),
        "a URI's user information");
    // an AWS secret key may hold a slash
    assertEquals("at s3a://***@bucket/x", JobTracker.redact("at s3a://AKIA:abc/def@bucket/x"));
    // a port, path and query are not a password: only the query's secret-looking keys go
    assertEquals("at https://host:8080/p?x=a@b", JobTracker.redact(
        "at https://host:8080/p?x=a@b"));
    assertEquals("at 'file:///tmp/t.lance' (a@b)", JobTracker.redact(
        "at 'file:///tmp/t.lance' (a@b)"), "no user information: unchanged");
    assertEquals("view lance.ns.v at version 3", JobTracker.redact(
        "view lance.ns.v at version 3"), "nothing secret: unchanged");
  }
}
