package io.lancerest.client.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * A loopback TCP server that hands each accepted connection to {@link #serve} on its own daemon
 * thread: the frame of the test proxies in front of s3proxy ({@link S3Wire}).
 */
public abstract class OneRequestProxy implements AutoCloseable {
  private final String name;
  private final ServerSocket socket;
  private final ExecutorService threads;
  private volatile boolean closed;

  protected OneRequestProxy(String name) {
    this.name = name;
    this.threads = Executors.newCachedThreadPool(r -> {
      Thread t = new Thread(r, name);
      t.setDaemon(true);
      return t;
    });
    try {
      socket = new ServerSocket(0, 128, InetAddress.getLoopbackAddress());
    } catch (IOException e) {
      throw new UncheckedIOException("the " + name + " did not start", e);
    }
  }

  /** Starts taking connections; the subclass's factory calls it once it is fully built. */
  protected final void startAccepting() {
    threads.execute(this::acceptLoop);
  }

  /** Answers one client connection; the caller closes nothing (the method owns it). */
  protected abstract void serve(Socket client);

  public String endpoint() {
    return "http://127.0.0.1:" + socket.getLocalPort();
  }

  private void acceptLoop() {
    while (!closed) {
      try {
        Socket client = socket.accept();
        threads.execute(() -> serve(client));
      } catch (IOException e) {
        if (!closed) {
          System.err.println(name + ": accept failed: " + e);
        }
      }
    }
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
}
