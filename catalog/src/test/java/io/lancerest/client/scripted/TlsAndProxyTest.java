package io.lancerest.client.scripted;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.client.LanceRestClient;
import io.lancerest.client.error.ClientConfigException;
import io.lancerest.client.error.CommunicationException;
import io.lancerest.client.model.DescribeNamespaceRequest;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import javax.net.ssl.SSLException;
import okhttp3.mockwebserver.MockWebServer;
import okhttp3.mockwebserver.RecordedRequest;
import okhttp3.tls.HandshakeCertificates;
import okhttp3.tls.HeldCertificate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * HTTPS to a server whose certificate is signed by a private CA given as 'tls.ca-file', and
 * plain HTTP through the 'proxy' option. The shared scripted server plays the proxy.
 */
class TlsAndProxyTest extends ScriptedServerTest {
  private MockWebServer https;
  private Path caFile;
  @TempDir
  Path tmp;

  @BeforeAll
  void startHttpsServer(@TempDir Path dir) throws IOException {
    HeldCertificate ca = new HeldCertificate.Builder().certificateAuthority(0)
        .commonName("Test CA").build();
    HeldCertificate serverCert = new HeldCertificate.Builder().signedBy(ca)
        .addSubjectAlternativeName("localhost").addSubjectAlternativeName("127.0.0.1").build();
    HandshakeCertificates serverTls = new HandshakeCertificates.Builder()
        .heldCertificate(serverCert, ca.certificate()).build();
    https = new MockWebServer();
    https.useHttps(serverTls.sslSocketFactory(), false);
    https.start();
    caFile = dir.resolve("ca.pem");
    Files.writeString(caFile, ca.certificatePem());
  }

  @AfterAll
  void stopHttpsServer() throws IOException {
    https.shutdown();
  }

  private String httpsUri() {
    return "https://localhost:" + https.getPort();
  }

  @Test
  void customCaFileMakesThePrivateCertificateTrusted() throws InterruptedException {
    https.enqueue(ok("{\"properties\":{\"k\":\"v\"}}"));
    LanceRestClient c = new LanceRestClient(transport(Map.of("uri", httpsUri(),
        "tls.ca-file", caFile.toString())));

    assertEquals(Map.of("k", "v"),
        c.describeNamespace(new DescribeNamespaceRequest().id(List.of("ns"))).getProperties());
    RecordedRequest r = https.takeRequest();
    assertEquals("/v1/namespace/ns/describe?delimiter=%24", r.getPath());
    assertTrue(r.getRequestUrl().isHttps());
  }

  @Test
  void withoutTheCaFileTheHandshakeFailsAndIsNotRetried() {
    LanceRestClient c = new LanceRestClient(transport(Map.of("uri", httpsUri(),
        "retry.max-attempts", "4")));

    CommunicationException e = assertThrows(CommunicationException.class,
        () -> c.describeNamespace(new DescribeNamespaceRequest().id(List.of("ns"))));

    assertInstanceOf(SSLException.class, e.getCause());
    assertTrue(waits.isEmpty(), "a TLS failure is not retried");
    assertFalse(e.isOutcomeUnknown());
    assertTrue(e.getMessage().startsWith("DescribeNamespace 'ns': could not reach the server "
        + "(SSLHandshakeException"), e.getMessage());
  }

  @Test
  void caFileWithoutCertificatesIsAConfigError() throws IOException {
    Path empty = Files.writeString(tmp.resolve("empty.pem"), "");
    ClientConfigException e = assertThrows(ClientConfigException.class,
        () -> transport(Map.of("uri", httpsUri(), "tls.ca-file", empty.toString())));
    assertEquals("Option 'tls.ca-file' (" + empty + ") holds no X.509 certificate",
        e.getMessage());
  }

  @Test
  void caFileWithGarbageIsAConfigError() throws IOException {
    Path bad = Files.writeString(tmp.resolve("bad.pem"),
        "-----BEGIN CERTIFICATE-----\nnot base64 at all!\n-----END CERTIFICATE-----\n");
    ClientConfigException e = assertThrows(ClientConfigException.class,
        () -> transport(Map.of("uri", httpsUri(), "tls.ca-file", bad.toString())));
    assertTrue(e.getMessage().startsWith("Option 'tls.ca-file' (" + bad + ")"), e.getMessage());
  }

  @Test
  void missingCaFileIsAConfigError() {
    ClientConfigException e = assertThrows(ClientConfigException.class,
        () -> transport(Map.of("uri", httpsUri(), "tls.ca-file", "/no/such/ca.pem")));
    assertEquals("Option 'tls.ca-file' names '/no/such/ca.pem', which is not a readable file",
        e.getMessage());
  }

  @Test
  void requestsGoThroughTheProxyWithAnAbsoluteRequestLine() throws InterruptedException {
    enqueue(ok("{\"properties\":{}}"));
    // The target host does not resolve: only the proxy can have answered.
    LanceRestClient c = new LanceRestClient(transport(Map.of(
        "uri", "http://lance.internal.invalid:2333/api", "proxy", uri())));

    c.describeNamespace(new DescribeNamespaceRequest().id(List.of("ns")));

    RecordedRequest r = next();
    assertEquals("POST http://lance.internal.invalid:2333/api/v1/namespace/ns/describe"
        + "?delimiter=%24 HTTP/1.1", r.getRequestLine());
    assertEquals("lance.internal.invalid:2333", r.getHeader("Host"));
  }

  @Test
  void proxyWithoutPortIsAConfigError() {
    ClientConfigException e = assertThrows(ClientConfigException.class,
        () -> transport(Map.of("uri", uri(), "proxy", "http://proxy.example")));
    assertEquals("Option 'proxy' must be 'http://host:port', got 'http://proxy.example'",
        e.getMessage());
  }
}
