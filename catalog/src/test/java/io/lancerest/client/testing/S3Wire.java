package io.lancerest.client.testing;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The HTTP/1.1 plumbing of the test proxies in front of an anonymous s3proxy
 * ({@link ExpiringKeyS3Proxy}, {@link FaultyS3Proxy}): one request per connection, its head
 * parsed, forwarded without signature and with {@code Connection: close}, and S3-style error
 * answers.
 */
final class S3Wire {
  private static final Pattern CREDENTIAL = Pattern.compile("Credential=([^/,\\s]+)/");

  private S3Wire() {}

  /** A request head as read from a client. */
  record Head(String requestLine, String keyId, String forwarded) {
    String method() {
      return requestLine.substring(0, Math.max(0, requestLine.indexOf(' ')));
    }

    /** The request target without its query, URL-decoded. */
    String path() {
      String[] parts = requestLine.split(" ");
      String target = parts.length > 1 ? parts[1] : "";
      int q = target.indexOf('?');
      return java.net.URLDecoder.decode(q < 0 ? target : target.substring(0, q),
          StandardCharsets.UTF_8);
    }

    /** The request's {@code Content-Length}, or -1. */
    long contentLength() {
      return S3Wire.contentLength(forwarded.getBytes(StandardCharsets.ISO_8859_1));
    }

    /** The head to send upstream: the client's headers without signature and pooling. */
    byte[] upstreamBytes() {
      return (forwarded + "Connection: close\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1);
    }
  }

  /** Reads and parses a request head; {@code null} when the client sent nothing. */
  static Head readRequest(InputStream in) throws IOException {
    byte[] head = readHead(in);
    if (head == null) {
      return null;
    }
    String[] lines = new String(head, StandardCharsets.ISO_8859_1).split("\r\n");
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
        keyId = java.net.URLDecoder.decode(rest.split("[& ]")[0], StandardCharsets.UTF_8)
            .split("/")[0];
      }
    }
    return new Head(requestLine, keyId, forwarded.toString());
  }

  /** The bytes up to and including the first empty line; {@code null} at end of stream first. */
  static byte[] readHead(InputStream in) throws IOException {
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
        throw new IOException("message head too long");
      }
    }
    return null;
  }

  /** The {@code Content-Length} of a response head, or -1. */
  static long contentLength(byte[] responseHead) {
    for (String line : new String(responseHead, StandardCharsets.ISO_8859_1).split("\r\n")) {
      int colon = line.indexOf(':');
      if (colon > 0 && line.substring(0, colon).trim().equalsIgnoreCase("content-length")) {
        return Long.parseLong(line.substring(colon + 1).trim());
      }
    }
    return -1;
  }

  /** Copies {@code from} to {@code to} until either side closes. */
  static void pipe(InputStream from, OutputStream to) {
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

  /** Copies the client's request body upstream on a daemon thread. */
  static void pipeInBackground(InputStream from, OutputStream to, String name) {
    Thread body = new Thread(() -> pipe(from, to), name);
    body.setDaemon(true);
    body.start();
  }

  /** An S3 error answer ({@code <Error><Code>…}); no body for a HEAD request. */
  static void error(OutputStream out, boolean head, int status, String reason, String code,
      String message, String requestId) throws IOException {
    byte[] xml = ("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>" + code
        + "</Code><Message>" + message + "</Message><RequestId>" + requestId + "</RequestId>"
        + "</Error>").getBytes(StandardCharsets.UTF_8);
    String h = "HTTP/1.1 " + status + " " + reason + "\r\nContent-Type: application/xml\r\n"
        + "Content-Length: " + (head ? 0 : xml.length) + "\r\nConnection: close\r\n\r\n";
    out.write(h.getBytes(StandardCharsets.ISO_8859_1));
    if (!head) {
      out.write(xml);
    }
    out.flush();
  }
}
