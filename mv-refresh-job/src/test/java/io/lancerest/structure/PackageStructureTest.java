package io.lancerest.structure;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.spark.mv.MaterializedViews;
import io.lancerest.spark.mv.engine.DefaultMaterializedViewsFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The layout the README promises, checked on the sources of every module: no package depends,
 * directly or through others, on a package that depends on it, and every package says what it
 * is for in a {@code package-info.java}; no main source is so large that it must hold more than
 * one job.
 */
class PackageStructureTest {
  /** Modules whose main sources are checked; the test runs in mv-refresh-job/. */
  private static final List<String> MODULES = List.of("catalog", "connector", "mv-refresh-job",
      "embeddings", "bundle", "examples");
  private static final Pattern PACKAGE = Pattern.compile("^package\\s+([\\w.]+);",
      Pattern.MULTILINE);
  private static final Pattern REFERENCE = Pattern.compile("\\bio\\.lancerest(?:\\.\\w+)+");

  private record Source(Path file, String pkg, String code) {}

  private static List<Source> sources() throws IOException {
    List<Source> out = new ArrayList<>();
    for (String m : MODULES) {
      Path root = Path.of("..", m, "src", "main", "java");
      if (!Files.isDirectory(root)) {
        continue;
      }
      try (Stream<Path> files = Files.walk(root)) {
        for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
          String code = withoutCommentsAndLiterals(Files.readString(f));
          Matcher pm = PACKAGE.matcher(code);
          if (pm.find()) {
            out.add(new Source(f, pm.group(1), code));
          }
        }
      }
    }
    assertTrue(out.size() > 100, "the sources were found from " + Path.of("").toAbsolutePath());
    return out;
  }

  /** Java source with comments, string, text-block and char literals blanked out. */
  static String withoutCommentsAndLiterals(String s) {
    StringBuilder b = new StringBuilder(s.length());
    int i = 0;
    while (i < s.length()) {
      char c = s.charAt(i);
      if (c == '/' && i + 1 < s.length() && s.charAt(i + 1) == '/') {
        while (i < s.length() && s.charAt(i) != '\n') {
          i++;
        }
      } else if (c == '/' && i + 1 < s.length() && s.charAt(i + 1) == '*') {
        int end = s.indexOf("*/", i + 2);
        i = end < 0 ? s.length() : end + 2;
        b.append(' ');
      } else if (s.startsWith("\"\"\"", i)) {
        int end = s.indexOf("\"\"\"", i + 3);
        i = end < 0 ? s.length() : end + 3;
        b.append("\"\"");
      } else if (c == '"' || c == '\'') {
        i++;
        while (i < s.length() && s.charAt(i) != c) {
          i += s.charAt(i) == '\\' ? 2 : 1;
        }
        i++;
        b.append(c).append(c);
      } else {
        b.append(c);
        i++;
      }
    }
    return b.toString();
  }

  /** package → the packages its classes name (imports and qualified names). */
  private static Map<String, Set<String>> dependencies(List<Source> sources) {
    Map<String, String> classes = new HashMap<>();
    for (Source s : sources) {
      String name = s.file().getFileName().toString().replace(".java", "");
      classes.put(s.pkg() + "." + name, s.pkg());
    }
    Set<String> packages = new TreeSet<>(classes.values());
    Map<String, Set<String>> deps = new TreeMap<>();
    for (Source s : sources) {
      Set<String> d = deps.computeIfAbsent(s.pkg(), k -> new TreeSet<>());
      Matcher m = REFERENCE.matcher(s.code());
      while (m.find()) {
        String[] parts = m.group().split("\\.");
        for (int n = parts.length; n > 1; n--) {
          String prefix = String.join(".", java.util.Arrays.copyOf(parts, n));
          if (classes.containsKey(prefix)) {
            d.add(classes.get(prefix));
            break;
          }
          if (packages.contains(prefix)) {
            d.add(prefix); // a wildcard import or a name this scan does not know
            break;
          }
        }
      }
      d.remove(s.pkg());
    }
    return deps;
  }

  @Test
  void noPackageCycles() throws IOException {
    Map<String, Set<String>> deps = dependencies(sources());
    List<String> cycles = new ArrayList<>();
    for (String start : deps.keySet()) {
      // a path from one of start's dependencies back to start is a cycle through start
      Map<String, String> cameFrom = new LinkedHashMap<>();
      Deque<String> todo = new ArrayDeque<>();
      for (String d : deps.get(start)) {
        cameFrom.putIfAbsent(d, start);
        todo.add(d);
      }
      while (!todo.isEmpty()) {
        String p = todo.poll();
        if (p.equals(start)) {
          List<String> path = new ArrayList<>();
          String at = cameFrom.get(start);
          path.add(start);
          while (!at.equals(start)) {
            path.add(0, at);
            at = cameFrom.get(at);
          }
          path.add(0, start);
          cycles.add(String.join(" -> ", path));
          break;
        }
        for (String d : deps.getOrDefault(p, Set.of())) {
          if (!cameFrom.containsKey(d)) {
            cameFrom.put(d, p);
            todo.add(d);
          }
        }
      }
    }
    assertEquals(List.of(), cycles, "package cycles");
  }

  @Test
  void everyPackageSaysWhatItIsFor() throws IOException {
    Set<Path> dirs = new TreeSet<>();
    for (Source s : sources()) {
      dirs.add(s.file().getParent());
    }
    List<Path> missing = dirs.stream()
        .filter(d -> !Files.exists(d.resolve("package-info.java"))).toList();
    assertEquals(List.of(), missing, "packages without a package-info.java");
  }

  /** Types of one job each: a main source over this many lines is two types or more. */
  private static final int MAX_MAIN_LINES = 500;

  @Test
  void noMainSourceIsOverFiveHundredLines() throws IOException {
    List<String> large = new ArrayList<>();
    for (Source s : sources()) {
      long lines = Files.readAllLines(s.file()).size();
      if (lines > MAX_MAIN_LINES) {
        large.add(s.file().normalize() + " (" + lines + " lines)");
      }
    }
    assertEquals(List.of(), large, "main sources over " + MAX_MAIN_LINES + " lines: split them "
        + "along the data's path, one job per type");
  }

  @Test
  void theDefaultFactoryIsNamedWithoutADependencyOnTheEngine() {
    assertEquals(DefaultMaterializedViewsFactory.class.getName(),
        MaterializedViews.DEFAULT_FACTORY);
  }

  @Test
  void theScanSeesThroughCommentsAndLiterals() {
    assertEquals("int a = \"\"; ''  x", withoutCommentsAndLiterals(
        "int a = \"io.lancerest.x.Y // not a comment\"; '\"' /* io.lancerest.z.W */x"));
  }

  private static final String MV = "io.lancerest.spark.mv";

  /**
   * The engine's foundation, bottom up: each of these packages may use, within the engine, only
   * the packages listed for it, so a newcomer can read them in this order and the kinds, the
   * driver and the service all build on them rather than the other way round.
   */
  private static final Map<String, Set<String>> FOUNDATION = new LinkedHashMap<>();

  static {
    FOUNDATION.put(MV + ".error", Set.of());
    FOUNDATION.put(MV + ".function", Set.of(MV + ".error"));
    FOUNDATION.put(MV + ".definition", Set.of(MV + ".error"));
    FOUNDATION.put(MV + ".cli", Set.of(MV + ".error"));
    FOUNDATION.put(MV + ".indexes", Set.of());
    FOUNDATION.put(MV + ".result", Set.of(MV + ".error", MV + ".definition", MV + ".indexes"));
    FOUNDATION.put(MV + ".layout", Set.of(MV + ".error", MV + ".definition"));
    FOUNDATION.put(MV, Set.of(MV + ".error", MV + ".definition", MV + ".result", MV + ".cli",
        MV + ".indexes"));
  }

  @Test
  void theFoundationPackagesUseOnlyThoseBelowThem() throws IOException {
    Map<String, Set<String>> deps = dependencies(sources());
    List<String> wrong = new ArrayList<>();
    for (Map.Entry<String, Set<String>> e : FOUNDATION.entrySet()) {
      assertTrue(deps.containsKey(e.getKey()), "package " + e.getKey() + " has sources");
      for (String d : deps.get(e.getKey())) {
        if ((d.equals(MV) || d.startsWith(MV + ".")) && !e.getValue().contains(d)) {
          wrong.add(e.getKey() + " -> " + d);
        }
      }
    }
    assertEquals(List.of(), wrong, "foundation packages using packages above them");
  }

  /** The root package is the front door: the facade, the main, and what a caller passes in. */
  private static final int MAX_ROOT_FILES = 8;

  @Test
  void theRootPackageHoldsOnlyTheEntryPoints() throws IOException {
    Path root = Path.of("src", "main", "java", "io", "lancerest", "spark", "mv");
    List<String> files;
    try (Stream<Path> s = Files.list(root)) {
      files = s.filter(p -> p.toString().endsWith(".java"))
          .map(p -> p.getFileName().toString()).sorted().toList();
    }
    assertTrue(files.contains("MaterializedViews.java"), "the facade is in " + root);
    assertTrue(files.size() <= MAX_ROOT_FILES, "the root package " + MV + " holds "
        + files.size() + " files, more than " + MAX_ROOT_FILES + ": " + files
        + "; give the type a package that says its job");
  }
}
