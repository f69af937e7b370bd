package io.lancerest.client.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An S3 endpoint that fails, for tests: a TCP proxy in front of an anonymous s3proxy
 * ({@link S3ProxyFixture#startAnonymous}) that injects the faults object stores are known for.
 * Every {@code every}-th request gets the next {@link Fault} in turn that applies to its method;
 * the others pass unchanged. Commits (the PUT of a {@code _versions/*.manifest}) are spared by
 * that schedule: lance-core's object_store does not retry a conditional PUT after a connection
 * error, so each would fail its statement; {@link #failNextCommit} aims one fault at one.
 * {@link #refuseWrites} answers every write with {@code 503} until turned off, to see what a
 * statement does once its retries run out.
 *
 * <p>Each connection carries one request ({@code Connection: close} is added upstream), so
 * every retry of a client is a request the schedule counts.
 */
public final class FaultyS3Proxy extends OneRequestProxy {
  /** What a faulty request meets. */
  public enum Fault {
    /** The connection is reset after the request head; the store never sees the request. */
    RESET("connection reset before the store saw the request", Set.of()),
    /** {@code 503 SlowDown}; the store never sees the request. */
    SLOW_DOWN("503 SlowDown", Set.of()),
    /** A GET's answer is cut after half of its body, and the connection reset. */
    TRUNCATED("GET body cut in half, then reset", Set.of("GET")),
    /** A GET's body arrives in 8 pieces 50 ms apart. */
    SLOW_READ("GET body trickled over 0.4 s", Set.of("GET")),
    /** A write reaches the store and succeeds there; its answer is lost (reset). */
    LOST_RESPONSE("write applied, its answer lost", Set.of("PUT", "POST", "DELETE"));

    private final String description;
    private final Set<String> methods;

    Fault(String description, Set<String> methods) {
      this.description = description;
      this.methods = methods;
    }

    public String description() {
      return description;
    }

    boolean appliesTo(String method) {
      return methods.isEmpty() || methods.contains(method);
    }
  }

  private static final Set<String> WRITES = Set.of("PUT", "POST", "DELETE");
  private static final int UPSTREAM_TIMEOUT_MS = 60_000;

  private final int upstreamPort;
  private final AtomicLong requests = new AtomicLong();
  private final AtomicLong refused = new AtomicLong();
  private final Map<Fault, AtomicLong> injected = new EnumMap<>(Fault.class);
  private final List<String> samples = Collections.synchronizedList(new ArrayList<>());
  private volatile int every;
  private volatile boolean refuseWrites;
  private Fault nextCommitFault;
  private String nextCommitPath;
  private int turn;

  private FaultyS3Proxy(int upstreamPort) {
    super("faulty-s3-proxy");
    this.upstreamPort = upstreamPort;
    for (Fault f : Fault.values()) {
      injected.put(f, new AtomicLong());
    }
  }

  /** In front of {@code s3}, which must be anonymous; no faults until {@link #every}. */
  public static FaultyS3Proxy start(S3ProxyFixture s3) {
    FaultyS3Proxy p = new FaultyS3Proxy(s3.port());
    p.startAccepting();
    return p;
  }

  /** What lance-core needs to use this endpoint (any key: s3proxy behind it is anonymous). */
  public Map<String, String> storageOptions(String prefix) {
    Map<String, String> o = new LinkedHashMap<>();
    o.put(prefix + "aws_endpoint", endpoint());
    o.put(prefix + "aws_region", S3ProxyFixture.REGION);
    o.put(prefix + "aws_access_key_id", "faulty-proxy-key");
    o.put(prefix + "aws_secret_access_key", "faulty-proxy-secret");
    o.put(prefix + "allow_http", "true");
    o.put(prefix + "aws_virtual_hosted_style_request", "false");
    return o;
  }

  /** A fault on every {@code n}-th request from now on; 0 turns them off. */
  public void every(int n) {
    every = n;
  }

  /** While on, every PUT, POST and DELETE is answered {@code 503 SlowDown} and not applied. */
  public void refuseWrites(boolean on) {
    refuseWrites = on;
  }

  /**
   * {@code f} for the next commit PUT (of a {@code _versions/*.manifest}) whose decoded path
   * contains {@code pathPart}, once; other requests keep the schedule.
   */
  public synchronized void failNextCommit(Fault f, String pathPart) {
    nextCommitFault = f;
    nextCommitPath = pathPart;
  }

  /** Whether the fault of {@link #failNextCommit} is still waiting for its commit. */
  public synchronized boolean commitFaultPending() {
    return nextCommitFault != null;
  }

  public long requests() {
    return requests.get();
  }

  /** Faults injected of {@code f}. */
  public long injected(Fault f) {
    return injected.get(f).get();
  }

  /** Writes refused by {@link #refuseWrites}. */
  public long refused() {
    return refused.get();
  }

  /** The counts by fault, for reports. */
  public Map<Fault, Long> counts() {
    Map<Fault, Long> m = new EnumMap<>(Fault.class);
    injected.forEach((f, n) -> m.put(f, n.get()));
    return m;
  }

  private synchronized Fault pick(S3Wire.Head req) {
    long n = requests.incrementAndGet();
    String method = req.method();
    String path = req.path();
    boolean commit = method.equals("PUT") && path.contains("/_versions/")
        && path.endsWith(".manifest");
    if (commit) {
      if (nextCommitFault != null && path.contains(nextCommitPath)) {
        Fault f = nextCommitFault;
        nextCommitFault = null;
        return f;
      }
      return null;
    }
    int e = every;
    if (e <= 0 || n % e != 0) {
      return null;
    }
    Fault[] all = Fault.values();
    for (int i = 0; i < all.length; i++) {
      Fault f = all[(turn + i) % all.length];
      if (f.appliesTo(method)) {
        turn = (turn + i + 1) % all.length;
        return f;
      }
    }
    return null;
  }

  @Override
  protected void serve(Socket client) {
    try (client) {
      InputStream in = client.getInputStream();
      OutputStream out = client.getOutputStream();
      S3Wire.Head req = S3Wire.readRequest(in);
      if (req == null) {
        return;
      }
      String method = req.method();
      if (refuseWrites && WRITES.contains(method)) {
        refused.incrementAndGet();
        drainBody(in, req);
        S3Wire.error(out, false, 503, "Slow Down", "SlowDown", "Please reduce your request "
            + "rate.", "faulty-proxy");
        return;
      }
      Fault fault = pick(req);
      if (fault == Fault.RESET) {
        count(fault, req);
        reset(client);
        return;
      }
      if (fault == Fault.SLOW_DOWN) {
        count(fault, req);
        drainBody(in, req);
        S3Wire.error(out, method.equals("HEAD"), 503, "Slow Down", "SlowDown", "Please reduce "
            + "your request rate.", "faulty-proxy");
        return;
      }
      try (Socket up = new Socket("127.0.0.1", upstreamPort)) {
        up.setSoTimeout(UPSTREAM_TIMEOUT_MS);
        OutputStream upOut = up.getOutputStream();
        upOut.write(req.upstreamBytes());
        upOut.flush();
        S3Wire.pipeInBackground(in, upOut, "faulty-s3-proxy-body");
        InputStream upIn = up.getInputStream();
        if (fault == null) {
          S3Wire.pipe(upIn, out);
          return;
        }
        byte[] head = S3Wire.readHead(upIn);
        if (head == null) {
          return;
        }
        if (fault == Fault.LOST_RESPONSE) {
          upIn.transferTo(OutputStream.nullOutputStream()); // the store finished the write
          count(fault, req);
          reset(client);
          return;
        }
        byte[] body = upIn.readAllBytes();
        long declared = S3Wire.contentLength(head);
        out.write(head);
        if (fault == Fault.TRUNCATED && declared >= 2 && body.length >= 2) {
          out.write(body, 0, body.length / 2);
          out.flush();
          count(fault, req);
          reset(client);
          return;
        }
        if (fault == Fault.SLOW_READ) {
          count(fault, req);
          int piece = Math.max(1, (body.length + 7) / 8);
          for (int off = 0; off < body.length; off += piece) {
            out.write(body, off, Math.min(piece, body.length - off));
            out.flush();
            Thread.sleep(50);
          }
        } else {
          out.write(body);
        }
        out.flush();
      }
    } catch (IOException e) {
      // the client or s3proxy went away: the client sees its connection end
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void count(Fault f, S3Wire.Head req) {
    injected.get(f).incrementAndGet();
    if (samples.size() < 30) {
      samples.add(f + " " + req.requestLine());
    }
  }

  /** Reads a request's {@code Content-Length} body, so that an answer is not lost to a reset. */
  private static void drainBody(InputStream in, S3Wire.Head req) throws IOException {
    long n = req.contentLength();
    if (n > 0) {
      long left = n;
      byte[] buf = new byte[64 * 1024];
      while (left > 0) {
        int r = in.read(buf, 0, (int) Math.min(buf.length, left));
        if (r < 0) {
          return;
        }
        left -= r;
      }
    }
  }

  private static void reset(Socket client) throws IOException {
    client.setSoLinger(true, 0); // close with RST, as a dropped connection looks
  }

  @Override
  public String toString() {
    return "FaultyS3Proxy{" + endpoint() + ", " + requests + " requests, faults " + counts()
        + ", " + refused + " writes refused" + (samples.isEmpty() ? "" : ", e.g. " + samples)
        + "}";
  }
}
