package io.lancerest.examples;

import java.util.function.Predicate;
import java.util.function.Supplier;

/** How the examples' mains that take options ({@link DevServer}, {@link SqlRunner}) read them. */
final class CommandLines {
  private CommandLines() {}

  /**
   * The options {@code parse} makes of the command line. A bad one ({@code parse} throws
   * IllegalArgumentException) prints {@code <program>: <message>} and the usage on standard error
   * and exits with 2; for {@code --help} ({@code help} is true of the options) the usage goes to
   * standard output and this returns null: the main has nothing more to do.
   */
  static <T> T parseOrExit(String program, String usage, Supplier<T> parse, Predicate<T> help) {
    T options;
    try {
      options = parse.get();
    } catch (IllegalArgumentException e) {
      System.err.println(program + ": " + e.getMessage() + "\n" + usage);
      System.exit(2);
      return null;
    }
    if (help.test(options)) {
      System.out.println(usage);
      return null;
    }
    return options;
  }
}
