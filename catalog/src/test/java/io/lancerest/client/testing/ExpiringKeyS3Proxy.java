package io.lancerest.client.testing;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * An S3 endpoint whose keys expire, for tests: a TCP proxy in front of an anonymous s3proxy
 * ({@link S3ProxyFixture#startAnonymous}). The access key id of each request (from its AWS v4
 * {@code Authorization} header or presigned {@code X-Amz-Credential}) must be one {@link #mint}
 * made, and is accepted only until its expiry: after it, the request is answered as S3 answers an
 * expired session key ({@code 400 ExpiredToken}) and never reaches s3proxy. Signatures are not
 * checked (s3proxy is anonymous); the key's validity window is what is tested.
 *
 * <p>Each connection carries one request ({@code Connection: close} is added), so a client
 * that pooled a connection while its key was valid cannot send later requests past the check.
 */
public final class ExpiringKeyS3Proxy implements AutoCloseable {
  /** A key pair, valid until {@code expiresAtMillis}. */
  public record Key(String accessKeyId, String secretAccessKey, long expiresAtMillis) {}

  private static final Pattern KEY_ID = Pattern.compile("^EXP(\\d+)X\\d+$");
  private static final Pattern CREDENTIAL = Pattern.compile("Credential=([^/,\\s]+)/");

  private final String upstreamHost;
  private final int upstreamPort;
  private final ServerSocket socket;
  private final ExecutorService threads = Executors.newCachedThreadPool(r -> {
    Thread t = new Thread(r, "expiring-s3-proxy");
    t.setDaemon(true);
    return t;
  });
  private final AtomicLong minted = new AtomicLong();
  private final AtomicLong accepted = new AtomicLong();
  private final AtomicLong expired = new AtomicLong();
  private final AtomicLong unknown = new AtomicLong();
  private final java.util.List<String> refusedRequests =
      java.util.Collections.synchronizedList(new java.util.ArrayList<>());
  private volatile boolean closed;

  private ExpiringKeyS3Proxy(String upstreamHost, int upstreamPort) {
    this.upstreamHost = upstreamHost;
    this.upstreamPort = upstreamPort;
    try {
      socket = new ServerSocket(0, 128, InetAddress.getLoopbackAddress());
    } catch (IOException e) {
      throw new UncheckedIOException("the expiring-key S3 proxy did not start", e);
    }
    threads.execute(this::acceptLoop);
  }

  /** In front of {@code s3}, which must be anonymous. */
  public static ExpiringKeyS3Proxy start(S3ProxyFixture s3) {
    return new ExpiringKeyS3Proxy("127.0.0.1", s3.port());
  }

  public String endpoint() {
    return "http://127.0.0.1:" + socket.getLocalPort();
  }

  /** A new key pair valid until {@code expiresAtMillis}. */
  public Key mint(long expiresAtMillis) {
    long n = minted.incrementAndGet();
    return new Key("EXP" + expiresAtMillis + "X" + n, "vended-secret-" + n, expiresAtMillis);
  }

  /** What lance-core needs to use {@code k} here. */
  public Map<String, String> storageOptions(Key k) {
    Map<String, String> o = new LinkedHashMap<>();
    o.put("aws_endpoint", endpoint());
    o.put("aws_region", S3ProxyFixture.REGION);
    o.put("aws_access_key_id", k.accessKeyId());
    o.put("aws_secret_access_key", k.secretAccessKey());
    o.put("allow_http", "true");
    o.put("aws_virtual_hosted_style_request", "false");
    return o;
  }

  public long minted() {
    return minted.get();
  }

  /** Requests passed on to s3proxy. */
  public long accepted() {
    return accepted.get();
  }

  /** Requests refused because their key had expired. */
  public long expired() {
    return expired.get();
  }

  /** Requests refused because they carried no key this proxy minted. */
  public long unknown() {
    return unknown.get();
  }

  private void acceptLoop() {
    while (!closed) {
      try {
        Socket client = socket.accept();
        threads.execute(() -> serve(client));
      } catch (IOException e) {
        if (!closed) {
          System.err.println("expiring-key S3 proxy: accept failed: " + e);
        }
      }
    }
  }

  private void serve(Socket client) {
    try (client) {
      InputStream in = client.getInputStream();
      byte[] head = readHead(in);
      if (head == null) {
        return;
      }
      String text = new String(head, StandardCharsets.ISO_8859_1);
      String[] lines = text.split("\r\n");
      String requestLine = lines[0];
      String keyId = null;
      StringBuilder forwarded = new StringBuilder(requestLine).append("\r\n");
      for (int i = 1; i < lines.length; i++) {
        String line = lines[i];
        int colon = line.indexOf(':');
        if (colon < 0) {
          continue;
        }
        String name = line.substring(0, colon).trim().toLowerCase(Locale.ROOT);
        String value = line.substring(colon + 1).trim();
        if (name.equals("authorization")) {
          Matcher m = CREDENTIAL.matcher(value);
          if (m.find()) {
            keyId = m.group(1);
          }
          continue; // s3proxy is anonymous: the signature is not its business
        }
        if (name.equals("connection") || name.equals("x-amz-security-token")) {
          continue;
        }
        forwarded.append(line).append("\r\n");
      }
      if (keyId == null) {
        int q = requestLine.indexOf("X-Amz-Credential=");
        if (q >= 0) {
          String rest = requestLine.substring(q + "X-Amz-Credential=".length());
          keyId = URLDecoder.decode(rest.split("[& ]")[0], StandardCharsets.UTF_8).split("/")[0];
        }
      }
      OutputStream out = client.getOutputStream();
      boolean head0 = requestLine.startsWith("HEAD ");
      Matcher k = keyId == null ? null : KEY_ID.matcher(keyId);
      if (k == null || !k.matches()) {
        unknown.incrementAndGet();
        refuse(out, head0, 403, "InvalidAccessKeyId", "The AWS Access Key Id you provided "
            + "does not exist in our records.");
        return;
      }
      if (System.currentTimeMillis() >= Long.parseLong(k.group(1))) {
        expired.incrementAndGet();
        if (refusedRequests.size() < 20) {
          refusedRequests.add(requestLine + " (key expired "
              + (System.currentTimeMillis() - Long.parseLong(k.group(1))) + " ms before)");
        }
        refuse(out, head0, 400, "ExpiredToken", "The provided token has expired.");
        return;
      }
      accepted.incrementAndGet();
      forwarded.append("Connection: close\r\n\r\n");
      try (Socket up = new Socket(upstreamHost, upstreamPort)) {
        OutputStream upOut = up.getOutputStream();
        upOut.write(forwarded.toString().getBytes(StandardCharsets.ISO_8859_1));
        upOut.flush();
        Thread body = new Thread(() -> pipe(in, upOut), "expiring-s3-proxy-body");
        body.setDaemon(true);
        body.start();
        pipe(up.getInputStream(), out);
      }
    } catch (IOException e) {
      // the client or s3proxy went away: the client sees its connection end
    }
  }

  private static void pipe(InputStream from, OutputStream to) {
    byte[] buf = new byte[64 * 1024];
    try {
      for (int n; (n = from.read(buf)) >= 0; ) {
        to.write(buf, 0, n);
        to.flush();
      }
    } catch (IOException ignored) {
      // one side closed
    }
  }

  private static byte[] readHead(InputStream in) throws IOException {
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    int state = 0;
    for (int c; (c = in.read()) >= 0; ) {
      b.write(c);
      state = (c == '\r' && (state == 0 || state == 2)) ? state + 1
          : (c == '\n' && (state == 1 || state == 3)) ? state + 1 : 0;
      if (state == 4) {
        return b.toByteArray();
      }
      if (b.size() > 256 * 1024) {
        throw new IOException("request head too long");
      }
    }
    return null;
  }

  private static void refuse(OutputStream out, boolean head, int status, String code,
      String message) throws IOException {
    byte[] xml = ("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>" + code
        + "</Code><Message>" + message + "</Message><RequestId>expiring-key-proxy</RequestId>"
        + "</Error>").getBytes(StandardCharsets.UTF_8);
    String reason = status == 400 ? "Bad Request" : "Forbidden";
    String h = "HTTP/1.1 " + status + " " + reason + "\r\nContent-Type: application/xml\r\n"
        + "Content-Length: " + (head ? 0 : xml.length) + "\r\nConnection: close\r\n\r\n";
    out.write(h.getBytes(StandardCharsets.ISO_8859_1));
    if (!head) {
      out.write(xml);
    }
    out.flush();
  }

  @Override
  public void close() {
    closed = true;
    try {
      socket.close();
    } catch (IOException ignored) {
      // closing
    }
    threads.shutdownNow();
  }

  @Override
  public String toString() {
    return "ExpiringKeyS3Proxy{" + endpoint() + ", " + minted + " keys minted, " + accepted
        + " requests accepted, " + expired + " refused as expired, " + unknown
        + " without a minted key" + (refusedRequests.isEmpty() ? ""
        : ", refused: " + refusedRequests) + "}";
  }
}
