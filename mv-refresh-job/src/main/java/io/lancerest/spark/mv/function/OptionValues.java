package io.lancerest.spark.mv.function;

import io.lancerest.spark.mv.error.InvalidOptionException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Reads a function's {@code OPTIONS} values for its {@code validate} and {@code open}, with the
 * engine's wording for a bad value ({@link InvalidOptionException}).
 *
 * <p>Spark's {@code CaseInsensitiveStringMap} has typed getters, but a bad value surfaces as a
 * bare {@code NumberFormatException} or {@code IllegalArgumentException} naming neither the
 * function nor what is allowed, and it has no refusal of unknown keys; a view's options are
 * also case-sensitive in the stored definition, which that map would hide.
 */
public final class OptionValues {
  private OptionValues() {}

  /**
   * A whole number of at least {@code min}; {@code null} when the option is absent or blank.
   *
   * @param allowed what the error says is allowed, e.g. {@code "a positive whole number"}
   */
  public static Integer wholeNumber(Map<String, String> options, String key, int min,
      String allowed) {
    String v = options.get(key);
    if (v == null || v.isBlank()) {
      return null;
    }
    int n;
    try {
      n = Integer.parseInt(v.trim());
    } catch (NumberFormatException e) {
      throw new InvalidOptionException(key, v, allowed);
    }
    if (n < min) {
      throw new InvalidOptionException(key, v, allowed);
    }
    return n;
  }

  /** {@code true} or {@code false} (any case); {@code null} when absent or blank. */
  public static Boolean bool(Map<String, String> options, String key) {
    String v = options.get(key);
    if (v == null || v.isBlank()) {
      return null;
    }
    String t = v.trim().toLowerCase(Locale.ROOT);
    if (!t.equals("true") && !t.equals("false")) {
      throw new InvalidOptionException(key, v, "true or false");
    }
    return t.equals("true");
  }

  /**
   * Refuses keys outside {@code known}, so that a misspelt option ({@code chunksize}) is an
   * error rather than silently ignored.
   *
   * @param function how the error names the function, e.g. {@code "TextSplitter"}
   */
  public static void onlyKnown(Map<String, String> options, String function, Set<String> known) {
    List<String> unknown = new ArrayList<>();
    for (String k : options.keySet()) {
      if (!known.contains(k)) {
        unknown.add(k);
      }
    }
    if (!unknown.isEmpty()) {
      unknown.sort(null);
      throw new InvalidOptionException(function + " has no option" + (unknown.size() > 1
          ? "s " : " ") + String.join(", ", unknown.stream().map(k -> "'" + k + "'").toList())
          + "; its options are " + String.join(", ", known.stream().sorted().toList()));
    }
  }
}
