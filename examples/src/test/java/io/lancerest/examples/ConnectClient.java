package io.lancerest.examples;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;
import java.util.zip.ZipOutputStream;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.apache.xbean.asm9.ClassReader;
import org.apache.xbean.asm9.ClassWriter;
import org.apache.xbean.asm9.commons.ClassRemapper;
import org.apache.xbean.asm9.commons.Remapper;

/**
 * The class path of SparkConnectTest's client JVM: the Spark Connect JVM client as a build
 * resolves it ({@code target/connect-client/lib}, copied by examples/pom.xml), what that jar
 * lacks, and {@code ConnectScript} ({@code src/test/connect-client}) compiled against it.
 *
 * <p>What it lacks: spark-connect-client-jvm_2.12 3.5.0 as published refers to Guava and
 * protobuf under {@code org.sparkproject.connect.client.com.google} but holds neither there
 * (SPARK-45371, "The maven artifacts for the Spark Connect Scala Client are currently broken";
 * its first call fails with {@code NoClassDefFoundError:
 * org/sparkproject/connect/client/com/google/common/cache/CacheLoader}), and its pom leaves out
 * the netty that its Arrow allocator needs ({@code NoClassDefFoundError:
 * io/netty/buffer/PooledByteBufAllocator}). Guava 32.0.1-jre, failureaccess and protobuf-java
 * 3.23.4 (what Spark 3.5.0 builds with) are relocated here as the client expects them, and
 * Spark's netty-buffer and netty-common are added.
 */
final class ConnectClient {
  static final String MAIN = "io.lancerest.examples.connect.ConnectScript";
  private static final String GOOGLE = "com/google/";
  private static final String SHADED = "org/sparkproject/connect/client/com/google/";

  private ConnectClient() {}

  /** Builds what the client needs under {@code work} and returns its class path. */
  static String classPath(Path work) throws IOException {
    Path dir = Path.of(SparkClients.required("lancerest.connect.client.dir"));
    List<String> jars = new ArrayList<>(jarsIn(dir.resolve("lib")));
    jars.addAll(jarsIn(Path.of(SparkClients.required("lancerest.spark.netty.dir"))));
    Path repaired = work.resolve("connect-client-repair.jar");
    relocate(jarsIn(dir.resolve("repair")), repaired);
    jars.add(repaired.toString());
    Path classes = Files.createDirectories(work.resolve("connect-client-classes"));
    compile(source(), String.join(File.pathSeparator, jars), classes);
    jars.add(0, classes.toString());
    return String.join(File.pathSeparator, jars);
  }

  private static List<String> jarsIn(Path dir) throws IOException {
    try (Stream<Path> s = Files.list(dir)) {
      List<String> jars = s.filter(p -> p.toString().endsWith(".jar")).map(Path::toString)
          .sorted().toList();
      if (jars.isEmpty()) {
        throw new AssertionError("no jars in " + dir + " (copied by examples/pom.xml)");
      }
      return jars;
    }
  }

  /** Copies the classes of {@code jars} into {@code out}, com.google moved under the prefix. */
  private static void relocate(List<String> jars, Path out) throws IOException {
    Remapper remapper = new Remapper() {
      @Override
      public String map(String name) {
        return name.startsWith(GOOGLE) ? SHADED + name.substring(GOOGLE.length()) : name;
      }
    };
    Set<String> written = new HashSet<>();
    try (OutputStream file = Files.newOutputStream(out);
        ZipOutputStream zip = new ZipOutputStream(file)) {
      for (String jar : jars) {
        try (InputStream f = Files.newInputStream(Path.of(jar));
            ZipInputStream in = new ZipInputStream(f)) {
          for (ZipEntry e; (e = in.getNextEntry()) != null; ) {
            String name = e.getName();
            if (!name.endsWith(".class") || name.contains("module-info")) {
              continue;
            }
            ClassReader reader = new ClassReader(in.readAllBytes());
            ClassWriter writer = new ClassWriter(0);
            reader.accept(new ClassRemapper(writer, remapper), 0);
            String target = remapper.map(reader.getClassName()) + ".class";
            if (written.add(target)) {
              zip.putNextEntry(new ZipEntry(target));
              zip.write(writer.toByteArray());
              zip.closeEntry();
            }
          }
        }
      }
    }
  }

  private static void compile(Path source, String classPath, Path classes) {
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    StringWriter messages = new StringWriter();
    boolean ok = javac.getTask(messages, null, null, List.of("-classpath", classPath, "-d",
        classes.toString(), "--release", "17", "-proc:none"), null,
        javac.getStandardFileManager(null, null, null).getJavaFileObjects(source)).call();
    if (!ok) {
      throw new AssertionError("cannot compile " + source + " against the Connect client:\n"
          + messages);
    }
  }

  private static Path source() {
    Path rel = Path.of("src", "test", "connect-client", "io", "lancerest", "examples", "connect",
        "ConnectScript.java");
    return Files.exists(rel) ? rel : Path.of("examples").resolve(rel);
  }
}
