package io.lancerest.examples;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/** Directories of Lance tables the examples and benchmarks create and remove. */
public final class Warehouses {
  private Warehouses() {}

  /** Removes {@code dir} and everything under it, if it exists. */
  public static void delete(Path dir) {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> walk = Files.walk(dir)) {
      walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot remove " + dir, e);
    }
  }

  /** An empty {@code dir}: whatever was there is removed. */
  public static void reset(Path dir) throws IOException {
    delete(dir);
    Files.createDirectories(dir);
  }
}
