package io.lancerest.testing;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A {@code main} of the test classpath run in a JVM of its own, for what must not run in the
 * test JVM (a lance-core call that spins, a process to kill), always with a bounded wait: {@link
 * #await} kills the child when the wait is over, and {@link #close} kills it in any case.
 */
public final class ChildJvm implements AutoCloseable {
  private final String what;
  private final Process process;
  private final StringBuffer output = new StringBuffer();
  private final Thread pump;
  private final long started = System.nanoTime();

  /** What the child did within the wait. */
  public record Result(boolean finished, int exitCode, String output, Duration elapsed) {}

  private ChildJvm(String what, Process process) {
    this.what = what;
    this.process = process;
    this.pump = new Thread(() -> {
      try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(),
          StandardCharsets.UTF_8))) {
        for (String line; (line = r.readLine()) != null; ) {
          output.append(line).append('\n');
        }
      } catch (IOException ignored) {
        // the child was killed
      }
    }, "child-jvm-output");
    pump.setDaemon(true);
    pump.start();
  }

  /**
   * Starts {@code main} with {@code args}, the test JVM's classpath and module flags (the
   * {@code --add-opens} Spark and Arrow need) and {@code jvmArgs}.
   *
   * @param what what the child does, for failure messages
   */
  public static ChildJvm start(String what, Class<?> main, List<String> jvmArgs,
      String... args) {
    return start(what, main.getName(), System.getProperty("java.class.path"), jvmArgs, args);
  }

  /** {@link #start(String, Class, List, String...)} with another class path. */
  public static ChildJvm start(String what, String main, String classPath, List<String> jvmArgs,
      String... args) {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    for (String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
      if (a.startsWith("--add-opens") || a.startsWith("--add-exports")
          || a.startsWith("-Djdk.reflect") || a.startsWith("-Dio.netty")) {
        cmd.add(a);
      }
    }
    cmd.addAll(jvmArgs);
    cmd.add("-cp");
    cmd.add(classPath);
    cmd.add(main);
    cmd.addAll(List.of(args));
    try {
      return new ChildJvm(what, new ProcessBuilder(cmd).redirectErrorStream(true).start());
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot start a JVM for " + what, e);
    }
  }

  /**
   * Writes {@code text} to the child's standard input and closes it, so that the child reads
   * the end of its input after the text (a REPL then exits).
   */
  public void input(String text) {
    try (OutputStream in = process.getOutputStream()) {
      in.write(text.getBytes(StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot write to the standard input of " + what
          + "; its output:\n" + output, e);
    }
  }

  /** What the child has printed so far (standard output and error). */
  public String output() {
    return output.toString();
  }

  /**
   * Waits until {@code limit} has passed since the child started; a child still running then is
   * killed ({@code !finished}).
   */
  public Result await(Duration limit) {
    boolean finished;
    try {
      long left = limit.toNanos() - (System.nanoTime() - started);
      finished = process.waitFor(Math.max(0, left), TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      finished = false;
    }
    if (!finished) {
      kill();
    }
    try {
      pump.join(5_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    Duration elapsed = Duration.ofNanos(System.nanoTime() - started);
    return new Result(finished, finished ? process.exitValue() : -1, output.toString(), elapsed);
  }

  /**
   * Waits until the child has printed {@code marker} (at most {@code limit} after its start);
   * fails with its output if it exits or the time passes first.
   */
  public void awaitOutput(String marker, Duration limit) {
    long deadline = started + limit.toNanos();
    while (!output.toString().contains(marker)) {
      if (!process.isAlive()) {
        try {
          pump.join(5_000); // what it printed before it exited
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        if (output.toString().contains(marker)) {
          return;
        }
        throw new AssertionError(what + " exited with " + process.exitValue() + " before it "
            + "printed '" + marker + "'; its output:\n" + output);
      }
      if (System.nanoTime() > deadline) {
        kill();
        throw new AssertionError(what + " did not print '" + marker + "' within "
            + limit.toSeconds() + " s (killed); its output:\n" + output);
      }
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError("interrupted while waiting for " + what, e);
      }
    }
  }

  /** Like {@link #await}, and fails unless the child exited 0 within {@code limit} of its start. */
  public String awaitSuccess(Duration limit) {
    Result r = await(limit);
    if (!r.finished()) {
      throw new AssertionError(what + " did not finish within " + limit.toSeconds() + " s (killed"
          + " after " + r.elapsed().toMillis() + " ms); its output:\n" + r.output());
    }
    if (r.exitCode() != 0) {
      throw new AssertionError(what + " exited with " + r.exitCode() + " after "
          + r.elapsed().toMillis() + " ms; its output:\n" + r.output());
    }
    return r.output();
  }

  private void kill() {
    process.descendants().forEach(ProcessHandle::destroyForcibly);
    process.destroyForcibly();
    try {
      process.waitFor(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public void close() {
    if (process.isAlive()) {
      kill();
    }
  }
}
