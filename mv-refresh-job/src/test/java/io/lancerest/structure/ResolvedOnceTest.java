package io.lancerest.structure;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * A statement resolves each table once: a DescribeTable gives its location and storage options,
 * which become one {@code LanceLocation} with one credential provider, and every later step
 * takes that value. Checked on the engine's sources: no step builds read options, fragment
 * writers or providers from a bare storage map, and a {@code LanceLocation} is made only where a
 * table is described or where a Spark task receives the map a location cannot travel as.
 */
class ResolvedOnceTest {
  private static final Path MAIN = Path.of("src", "main", "java");
  private static final Pattern FROM_A_MAP = Pattern.compile(
      "CredentialRefresh\\s*\\.\\s*(readOptions|fragments|current|provider)\\s*\\("
          + "|new\\s+ReadOptions\\s*\\.\\s*Builder|Fragment\\s*\\.\\s*write\\s*\\(");
  /** lance-core calls that take storage options but no provider: they get {@code current()}. */
  private static final Pattern OPTIONS_ONLY = Pattern.compile(
      "(LanceFileReader\\s*\\.\\s*open|LanceFileWriter\\s*\\.\\s*open|Dataset\\s*\\.\\s*drop"
          + "|withStorageOptions)\\s*\\(([^;]*)");
  private static final Pattern A_RAW_MAP = Pattern.compile("\\b\\w*[sS]torage\\w*\\b");
  private static final Pattern RESOLVED = Pattern.compile("LanceLocation\\s*\\.\\s*of\\s*\\(");

  /** Where a location may be made, and why there. */
  private static final Map<String, String> RESOLUTION_POINTS = Map.ofEntries(
      Map.entry("engine/CatalogBinding.java", "a DescribeTable of the view or its source"),
      Map.entry("server/CatalogSources.java", "the service's DescribeTable of a source table"),
      Map.entry("refresh/ViewTables.java", "a view and source given as plain values"),
      Map.entry("commit/ViewCommit.java", "a commit given a plain location and options"),
      Map.entry("chunker/TaskRunner.java", "a chunker task, from its shipped options"),
      Map.entry("chunker/TaskFragmentWriter.java", "a chunker task, from its shipped options"),
      Map.entry("query/WriteTask.java", "a query write task, from its shipped options"),
      Map.entry("udtf/OutputFragments.java", "a UDTF task, from its shipped options"),
      Map.entry("udtf/IvfPartitions.java", "an IVF probe task, from its shipped options"),
      Map.entry("udtf/PartitionCheckpoints.java",
          "checkpoints shipped to tasks: once per JVM that holds them"));

  private static Map<String, String> sources() throws IOException {
    Path root = MAIN.resolve("io/lancerest/spark/mv");
    Map<String, String> out = new TreeMap<>();
    try (Stream<Path> files = Files.walk(root)) {
      for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
        out.put(root.relativize(f).toString().replace('\\', '/'),
            PackageStructureTest.withoutCommentsAndLiterals(Files.readString(f)));
      }
    }
    assertTrue(out.size() > 100, "the engine's sources were found under " + root.toAbsolutePath());
    return out;
  }

  @Test
  void noStepWorksATablesStorageOutAgainFromAMap() throws IOException {
    List<String> found = new ArrayList<>();
    sources().forEach((file, code) -> {
      Matcher m = FROM_A_MAP.matcher(code);
      while (m.find()) {
        found.add(file + ": " + m.group().replaceAll("\\s+", " "));
      }
      Matcher o = OPTIONS_ONLY.matcher(code);
      while (o.find()) {
        if (A_RAW_MAP.matcher(o.group(2)).find()) {
          found.add(file + ": " + o.group(1) + " given a storage map, not a location's current()");
        }
      }
    });
    assertEquals(List.of(), found, "take the statement's LanceLocation (readOptions(), "
        + "fragments(), current(), open()) instead of rebuilding them from storage options");
  }

  @Test
  void locationsAreMadeOnlyWhereATableIsDescribedOrATaskStarts() throws IOException {
    List<String> found = new ArrayList<>();
    List<String> unused = new ArrayList<>(RESOLUTION_POINTS.keySet());
    sources().forEach((file, code) -> {
      if (RESOLVED.matcher(code).find()) {
        unused.remove(file);
        if (!RESOLUTION_POINTS.containsKey(file)) {
          found.add(file);
        }
      }
    });
    assertEquals(List.of(), found, "LanceLocation.of outside the places that resolve a table: "
        + "pass the statement's location down instead");
    assertEquals(List.of(), unused, "resolution points listed here that no longer make one");
  }
}
