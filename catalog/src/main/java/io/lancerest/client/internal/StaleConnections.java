package io.lancerest.client.internal;

import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.Collections;
import java.util.Map;
import java.util.WeakHashMap;
import okhttp3.Call;
import okhttp3.Connection;
import okhttp3.EventListener;
import okhttp3.Interceptor;
import okhttp3.Protocol;

/**
 * Detects a pooled connection that the server closed while it sat idle, before a request is
 * written onto it.
 *
 * <p>Why: retries of OkHttp itself are off (a mutation must not be repeated blindly), so a
 * request written onto such a connection fails on reading the answer, and for a mutation the
 * client cannot tell whether it was applied. OkHttp checks only connections idle for more than
 * 10 s, and only for non-GET requests; servers close idle connections after as little as 2-5 s.
 * Here a connection idle for at least {@code checkAfterIdle} is probed (a 1 ms read: end of
 * stream or unexpected bytes mean it is unusable); a dead one is closed and the attempt fails
 * with {@link StaleConnectionException}, which every operation may retry at once because
 * nothing was sent.
 */
public final class StaleConnections {
  private final long checkAfterIdleNanos;
  /** When each pooled connection was last released; weak, so evicted connections drop out. */
  private final Map<Connection, Long> releasedAt =
      Collections.synchronizedMap(new WeakHashMap<>());

  public StaleConnections(Duration checkAfterIdle) {
    this.checkAfterIdleNanos = checkAfterIdle.toNanos();
  }

  /** Records release times; install with {@code OkHttpClient.Builder.eventListener}. */
  public EventListener listener() {
    return new EventListener() {
      @Override
      public void connectionReleased(Call call, Connection connection) {
        releasedAt.put(connection, System.nanoTime());
      }
    };
  }

  /** The probe, as a network interceptor (it runs once a connection has been chosen). */
  public Interceptor guard() {
    return chain -> {
      Connection c = chain.connection();
      Long released = c == null ? null : releasedAt.remove(c);
      // HTTP/2 has a reader thread of its own on the socket, which notices a closed connection.
      if (released != null && c.protocol() == Protocol.HTTP_1_1 && System.nanoTime() - released >= checkAfterIdleNanos
          && !isUsable(c.socket())) {
        c.socket().close(); // the pool evicts a closed socket instead of handing it out again
        throw new StaleConnectionException();
      }
      return chain.proceed(chain.request());
    };
  }

  private static boolean isUsable(Socket socket) {
    int timeout;
    try {
      timeout = socket.getSoTimeout();
    } catch (IOException e) {
      return false;
    }
    try {
      socket.setSoTimeout(1);
      InputStream in = socket.getInputStream();
      // An idle HTTP/1.1 connection has nothing to read: end of stream means the server closed
      // it, and bytes would be an answer nobody asked for. Either way it cannot carry a request.
      in.read();
      return false;
    } catch (SocketTimeoutException expected) {
      return true;
    } catch (IOException e) {
      return false;
    } finally {
      try {
        socket.setSoTimeout(timeout);
      } catch (IOException ignored) {
        // a socket that cannot take its timeout back fails on its next use
      }
    }
  }

  /** The request was not sent: its pooled connection had been closed by the server. */
  public static final class StaleConnectionException extends IOException {
    public StaleConnectionException() {
      super("the pooled connection had been closed by the server; the request was not sent");
    }
  }
}
