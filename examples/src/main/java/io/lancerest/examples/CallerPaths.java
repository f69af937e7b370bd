package io.lancerest.examples;

import java.nio.file.Path;

/**
 * Paths given on an example's command line, resolved against the directory the user ran the
 * command in. Maven runs the examples with {@code examples/} as their working directory, so the
 * {@code quickstart} profile of {@code examples/pom.xml} passes the directory {@code mvn} was
 * started in as the system property {@value #PROPERTY}; without it (a plain {@code java} run)
 * the working directory is the caller's.
 */
public final class CallerPaths {
  /** The system property the {@code quickstart} profile sets to Maven's {@code user.dir}. */
  public static final String PROPERTY = "examples.callerDir";

  private CallerPaths() {}

  /** The directory the user ran the command in. */
  public static Path callerDir() {
    String dir = System.getProperty(PROPERTY);
    return Path.of(dir == null || dir.isBlank() ? System.getProperty("user.dir") : dir);
  }

  /** {@code path} as an absolute, normalized path, relative ones taken from {@code callerDir}. */
  public static Path resolve(String path, Path callerDir) {
    return callerDir.toAbsolutePath().resolve(path).normalize();
  }

  /** {@link #resolve(String, Path)} against {@link #callerDir()}. */
  public static Path resolve(String path) {
    return resolve(path, callerDir());
  }
}
