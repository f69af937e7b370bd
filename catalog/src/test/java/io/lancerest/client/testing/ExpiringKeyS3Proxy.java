package io.lancerest.client.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.util.LinkedHashMap;
import java.util.Map;
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
public final class ExpiringKeyS3Proxy extends OneRequestProxy {
  /** A key pair, valid until {@code expiresAtMillis}. */
  public record Key(String accessKeyId, String secretAccessKey, long expiresAtMillis) {}

  private static final Pattern KEY_ID = Pattern.compile("^EXP(\\d+)X\\d+$");

  private final String upstreamHost;
  private final int upstreamPort;
  private final AtomicLong minted = new AtomicLong();
  private final AtomicLong accepted = new AtomicLong();
  private final AtomicLong expired = new AtomicLong();
  private final AtomicLong unknown = new AtomicLong();
  private final java.util.List<String> refusedRequests =
      java.util.Collections.synchronizedList(new java.util.ArrayList<>());

  private ExpiringKeyS3Proxy(String upstreamHost, int upstreamPort) {
    super("expiring-s3-proxy");
    this.upstreamHost = upstreamHost;
    this.upstreamPort = upstreamPort;
  }

  /** In front of {@code s3}, which must be anonymous. */
  public static ExpiringKeyS3Proxy start(S3ProxyFixture s3) {
    ExpiringKeyS3Proxy p = new ExpiringKeyS3Proxy("127.0.0.1", s3.port());
    p.startAccepting();
    return p;
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

  @Override
  protected void serve(Socket client) {
    try (client) {
      InputStream in = client.getInputStream();
      S3Wire.Head req = S3Wire.readRequest(in);
      if (req == null) {
        return;
      }
      String keyId = req.keyId();
      OutputStream out = client.getOutputStream();
      boolean head0 = req.method().equals("HEAD");
      Matcher k = keyId == null ? null : KEY_ID.matcher(keyId);
      if (k == null || !k.matches()) {
        unknown.incrementAndGet();
        S3Wire.error(out, head0, 403, "Forbidden", "InvalidAccessKeyId", "The AWS Access Key "
            + "Id you provided does not exist in our records.", "expiring-key-proxy");
        return;
      }
      if (System.currentTimeMillis() >= Long.parseLong(k.group(1))) {
        expired.incrementAndGet();
        if (refusedRequests.size() < 20) {
          refusedRequests.add(req.requestLine() + " (key expired "
              + (System.currentTimeMillis() - Long.parseLong(k.group(1))) + " ms before)");
        }
        S3Wire.error(out, head0, 400, "Bad Request", "ExpiredToken",
            "The provided token has expired.", "expiring-key-proxy");
        return;
      }
      accepted.incrementAndGet();
      try (Socket up = new Socket(upstreamHost, upstreamPort)) {
        OutputStream upOut = up.getOutputStream();
        upOut.write(req.upstreamBytes());
        upOut.flush();
        S3Wire.pipeInBackground(in, upOut, "expiring-s3-proxy-body");
        S3Wire.pipe(up.getInputStream(), out);
      }
    } catch (IOException e) {
      // the client or s3proxy went away: the client sees its connection end
    }
  }

  @Override
  public String toString() {
    return "ExpiringKeyS3Proxy{" + endpoint() + ", " + minted + " keys minted, " + accepted
        + " requests accepted, " + expired + " refused as expired, " + unknown
        + " without a minted key" + (refusedRequests.isEmpty() ? ""
        : ", refused: " + refusedRequests) + "}";
  }
}
