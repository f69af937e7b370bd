package io.lancerest.spark.mv.udtf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.spark.mv.chunker.ChunkerFunctions;
import io.lancerest.spark.mv.error.InvalidViewDefinitionException;
import io.lancerest.spark.mv.function.BatchUdtf;
import io.lancerest.spark.mv.function.Chunker;
import io.lancerest.spark.mv.function.UdtfContext;
import java.util.Iterator;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.Test;

/**
 * A class named by a definition is checked against the kind's interface before its static
 * initializer runs: a class of another type is refused without running any of its code. No Spark.
 */
class FunctionClassLoadingTest {
  /** The classes whose static initializer ran, in this JVM. */
  static final Set<String> INITIALIZED = ConcurrentHashMap.newKeySet();

  /** Neither a UDTF nor a chunker; its initializer would run code a caller chose. */
  public static final class Plain {
    static {
      INITIALIZED.add(Plain.class.getName());
    }

    public Plain() {}
  }

  /** A chunker, named where a UDTF is expected. */
  public static final class AChunker implements Chunker {
    static {
      INITIALIZED.add(AChunker.class.getName());
    }

    @Override
    public Iterator<Row> chunk(Row input) {
      return java.util.Collections.emptyIterator();
    }
  }

  /** A UDTF whose initializer fails: the failure is named, not a bare linkage error. */
  public static final class BrokenUdtf implements BatchUdtf {
    static {
      INITIALIZED.add(BrokenUdtf.class.getName());
      if (Boolean.parseBoolean("true")) {
        throw new IllegalStateException("no config in the environment");
      }
    }

    @Override
    public Iterator<Row> process(UdtfContext context, Iterator<Row> rows) {
      return rows;
    }
  }

  // UdtfRefresh (refresh) initialized the class before checking it; ChunkerFunctions never did,
  // its part here guards that.
  @Test
  void aClassOfAnotherTypeIsRefusedByEveryLoaderWithoutRunningItsInitializer() {
    UdtfValidationException plain = assertThrows(UdtfValidationException.class,
        () -> UdtfRefresh.instantiate(Plain.class.getName(), "u"));
    assertEquals("UDTF 'u': class " + Plain.class.getName() + " does not implement "
        + BatchUdtf.class.getName(), plain.getMessage());
    UdtfValidationException chunker = assertThrows(UdtfValidationException.class,
        () -> UdtfRefresh.instantiate(AChunker.class.getName(), "u"));
    assertTrue(chunker.getMessage().contains("does not implement " + BatchUdtf.class.getName()),
        chunker.getMessage());
    InvalidViewDefinitionException asChunker = assertThrows(
        InvalidViewDefinitionException.class,
        () -> ChunkerFunctions.check(Plain.class.getName(), false));
    assertEquals("Chunker class '" + Plain.class.getName() + "' does not implement "
        + Chunker.class.getName(), asChunker.getMessage());
    assertFalse(INITIALIZED.contains(Plain.class.getName()), "Plain's initializer ran");
    assertFalse(INITIALIZED.contains(AChunker.class.getName()), "AChunker's initializer ran");
  }

  @Test
  void aUdtfWhoseInitializerFailsIsRefusedNamingTheFailureAtEveryUse() {
    // The JVM runs a failed initializer once: a later use gets a bare NoClassDefFoundError,
    // which must be named the same way, not escape as an Error.
    for (int use = 1; use <= 2; use++) {
      UdtfValidationException e = assertThrows(UdtfValidationException.class,
          () -> UdtfRefresh.instantiate(BrokenUdtf.class.getName(), "b"), "use " + use);
      assertEquals("UDTF 'b': class " + BrokenUdtf.class.getName() + " failed in its static "
          + "initializer: java.lang.IllegalStateException: no config in the environment. Fix "
          + "the class (or the environment it reads) and restart the JVM that loaded it (the "
          + "Spark application, or the view service): a JVM never runs a failed static "
          + "initializer again", e.getMessage(), "use " + use);
    }
    assertTrue(INITIALIZED.contains(BrokenUdtf.class.getName()), "checked, then initialized");
  }

  @Test
  void anUnknownClassSaysWhereToPutItsJar() {
    UdtfValidationException e = assertThrows(UdtfValidationException.class,
        () -> UdtfRefresh.instantiate("com.example.Missing", "m"));
    assertTrue(e.getMessage().contains("class com.example.Missing is not on the classpath; add "
        + "its jar"), e.getMessage());
  }
}
