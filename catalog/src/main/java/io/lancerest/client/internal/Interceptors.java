package io.lancerest.client.internal;

import io.lancerest.client.error.ErrorDetails;
import io.lancerest.client.error.InvalidResponseException;
import io.lancerest.client.spec.Operation;
import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import okhttp3.Interceptor;
import okhttp3.Request;
import okhttp3.Response;
import okhttp3.ResponseBody;
import okio.BufferedSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The client's cross-cutting behaviour, as OkHttp interceptors. Order: retry, auth, headers. */
public final class Interceptors {
  private static final Logger LOG = LoggerFactory.getLogger("io.lancerest.client.http");

  private Interceptors() {}

  static Operation operationOf(Request request) {
    Operation op = request.tag(Operation.class);
    // Calls made without an operation tag (none in this client) are treated as mutations.
    return op == null ? Operation.CREATE_TABLE : op;
  }

  /** Static headers and the User-Agent; per-call headers already on the request win. */
  public static Interceptor headers(Map<String, String> staticHeaders, String userAgent) {
    return chain -> {
      Request.Builder b = chain.request().newBuilder();
      Request original = chain.request();
      staticHeaders.forEach((k, v) -> {
        if (original.header(k) == null) {
          b.header(k, v);
        }
      });
      if (original.header("User-Agent") == null) {
        b.header("User-Agent", userAgent);
      }
      return chain.proceed(b.build());
    };
  }

  /** Retries per {@link RetryPolicy}; sleeps between attempts. */
  public static Interceptor retry(RetryPolicy policy, Sleeper sleeper) {
    return chain -> {
      Request request = chain.request();
      Operation op = operationOf(request);
      int attempt = 1;
      while (true) {
        Response response;
        try {
          // Read the body here, inside the loop: a read whose body is cut off mid-way is a failed
          // attempt like a reset, not an error after the retries are over.
          response = buffered(op, chain.proceed(request));
        } catch (IOException e) {
          if (attempt >= policy.maxAttempts() || !policy.shouldRetry(op, e)) {
            throw e;
          }
          if (e instanceof StaleConnections.StaleConnectionException) {
            // A dead pooled connection was dropped before sending: go again at once.
            LOG.debug("{}: pooled connection was closed by the server, sending again", op);
            attempt++;
            continue;
          }
          Duration wait = policy.backoff(attempt, null);
          LOG.debug("{}: attempt {} failed ({}), retrying in {} ms", op, attempt,
              e.getClass().getSimpleName(), wait.toMillis());
          sleep(sleeper, wait);
          attempt++;
          continue;
        }
        String retryAfter = response.header("Retry-After");
        if (response.isSuccessful() || attempt >= policy.maxAttempts()
            || !policy.shouldRetry(op, response.code(), retryAfter)) {
          return response;
        }
        response.close();
        Duration wait = policy.backoff(attempt, retryAfter);
        LOG.debug("{}: attempt {} answered HTTP {}, retrying in {} ms", op, attempt,
            response.code(), wait.toMillis());
        sleep(sleeper, wait);
        attempt++;
      }
    };
  }

  /** Largest answer accepted: far above any real JSON answer, far below a memory problem. */
  public static final long MAX_RESPONSE_BYTES = 256L << 20;

  /**
   * The response with its body read into memory, refusing more than {@link
   * #MAX_RESPONSE_BYTES} (a misbehaving server or proxy must not exhaust the driver's heap).
   */
  static Response buffered(Operation op, Response response) throws IOException {
    ResponseBody body = response.body();
    if (body == null) {
      return response;
    }
    try (body) {
      long declared = body.contentLength();
      BufferedSource source = body.source();
      boolean tooLarge = declared >= 0 ? declared > MAX_RESPONSE_BYTES
          : source.request(MAX_RESPONSE_BYTES + 1);
      if (tooLarge) {
        throw new InvalidResponseException(new ErrorDetails("the answer to "
            + response.request().method() + " " + response.request().url().encodedPath()
            + " is larger than the " + (MAX_RESPONSE_BYTES >> 20) + " MiB the client accepts",
            "Check that 'uri' points at a Lance REST namespace server and not at another "
                + "service or a misbehaving proxy", null, response.code(), op, null, null, null),
            null);
      }
      byte[] bytes = source.readByteArray();
      return response.newBuilder().body(ResponseBody.create(bytes, body.contentType())).build();
    }
  }

  private static void sleep(Sleeper sleeper, Duration d) throws IOException {
    try {
      sleeper.sleep(d);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new java.io.InterruptedIOException("interrupted while waiting to retry");
    }
  }

  /** Logs operation, path, status and time at DEBUG. Never headers or bodies: they hold secrets. */
  public static Interceptor logging() {
    return chain -> {
      Request request = chain.request();
      if (!LOG.isDebugEnabled()) {
        return chain.proceed(request);
      }
      long start = System.nanoTime();
      Response response = chain.proceed(request);
      LOG.debug("{} {} {} -> {} in {} ms", operationOf(request), request.method(),
          request.url().encodedPath(), response.code(),
          TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
      return response;
    };
  }

  /** Waits between attempts; replaced in tests. */
  @FunctionalInterface
  public interface Sleeper {
    void sleep(Duration d) throws InterruptedException;

    Sleeper REAL = d -> Thread.sleep(d.toMillis());
  }
}
