package io.lancerest.spark.mv.definition;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;
import io.lancerest.client.LanceJson;
import io.lancerest.spark.mv.error.InvalidViewDefinitionException;
import io.lancerest.spark.mv.error.MaterializedViewException;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * What to do when a function call (a chunker's parent row, a UDTF partition) fails: the
 * {@code error_handling} JSON of a view (documented in {@code docs/materialized-views.md}).
 *
 * <p>Rules are tried in order; the first whose {@code match} regex is found in the failure text
 * ({@code <exception class>: <message>} of the error and of each cause) decides. A {@code retry}
 * rule applies while attempts remain; once they are used up, matching continues with the next
 * rules (so {@code retry} then {@code skip} reads "retry three times, then skip"). No match means
 * {@code fail}.
 *
 * @param format always {@value #FORMAT}
 * @param rules ordered rules; empty means every error fails the refresh
 * @param maxSkipCount at most this many skipped items per refresh, or {@code null} for no limit
 * @param maxSkipFraction at most this fraction (0..1) of the items, or {@code null}
 * @param faultIsolation chunkers: {@code skip_rows} skips the failing parent only, {@code
 *     fail_batch} skips its whole work item
 */
public record ErrorHandling(String format, List<Rule> rules, Long maxSkipCount,
    Double maxSkipFraction, FaultIsolation faultIsolation) {
  public static final String FORMAT = "lancerest.error_handling.v1";

  /** Every error fails the refresh (the default). */
  public static final ErrorHandling FAIL = new ErrorHandling(FORMAT, List.of(), null, null, null);

  public enum Action {
    RETRY, SKIP, FAIL;

    @JsonValue
    public String wire() {
      return name().toLowerCase(Locale.ROOT);
    }

    @JsonCreator
    public static Action of(String v) {
      return parse(Action.class, v, "action");
    }
  }

  public enum Backoff {
    FIXED, LINEAR, EXPONENTIAL;

    @JsonValue
    public String wire() {
      return name().toLowerCase(Locale.ROOT);
    }

    @JsonCreator
    public static Backoff of(String v) {
      return parse(Backoff.class, v, "backoff");
    }
  }

  public enum FaultIsolation {
    SKIP_ROWS, FAIL_BATCH;

    @JsonValue
    public String wire() {
      return name().toLowerCase(Locale.ROOT);
    }

    @JsonCreator
    public static FaultIsolation of(String v) {
      return parse(FaultIsolation.class, v, "fault_isolation");
    }
  }

  private static <E extends Enum<E>> E parse(Class<E> type, String v, String field) {
    for (E e : type.getEnumConstants()) {
      if (e.name().equalsIgnoreCase(v == null ? "" : v.trim())) {
        return e;
      }
    }
    throw new InvalidViewDefinitionException("error_handling '" + field + "' is '" + v
        + "'; expected one of " + java.util.Arrays.stream(type.getEnumConstants())
            .map(e -> e.name().toLowerCase(Locale.ROOT)).toList());
  }

  /**
   * @param match Java regex searched in the failure text; {@code null} matches everything
   * @param action what to do
   * @param maxAttempts retry only: total attempts including the first (default 3)
   * @param backoff retry only: delay growth (default exponential)
   * @param initialBackoffMs retry only: first delay (default 100)
   * @param maxBackoffMs retry only: delay cap (default 10000)
   */
  public record Rule(String match, Action action, Integer maxAttempts, Backoff backoff,
      Long initialBackoffMs, Long maxBackoffMs) {
    public Rule {
      if (action == null) {
        throw new InvalidViewDefinitionException(
            "error_handling rule needs an 'action': retry, skip or fail");
      }
      if (match != null) {
        try {
          Pattern.compile(match);
        } catch (PatternSyntaxException e) {
          throw new InvalidViewDefinitionException("error_handling rule has an invalid 'match' "
              + "regex '" + match + "': " + e.getDescription(), e);
        }
      }
      if (action == Action.RETRY) {
        maxAttempts = maxAttempts == null ? 3 : maxAttempts;
        backoff = backoff == null ? Backoff.EXPONENTIAL : backoff;
        initialBackoffMs = initialBackoffMs == null ? 100L : initialBackoffMs;
        maxBackoffMs = maxBackoffMs == null ? 10_000L : maxBackoffMs;
        if (maxAttempts < 1 || initialBackoffMs < 0 || maxBackoffMs < initialBackoffMs) {
          throw new InvalidViewDefinitionException("error_handling retry rule needs "
              + "max_attempts >= 1 and 0 <= initial_backoff_ms <= max_backoff_ms");
        }
      }
    }

    public static Rule retry(String match, int maxAttempts, Backoff backoff, long initialMs,
        long maxMs) {
      return new Rule(match, Action.RETRY, maxAttempts, backoff, initialMs, maxMs);
    }

    public static Rule of(String match, Action action) {
      return new Rule(match, action, null, null, null, null);
    }

    boolean matches(String failureText) {
      return match == null || Pattern.compile(match).matcher(failureText).find();
    }

    long delayMs(int failedAttempts) {
      long d = switch (backoff) {
        case FIXED -> initialBackoffMs;
        case LINEAR -> initialBackoffMs * failedAttempts;
        case EXPONENTIAL -> failedAttempts >= 62
            ? Long.MAX_VALUE : initialBackoffMs << (failedAttempts - 1);
      };
      return d < 0 ? maxBackoffMs : Math.min(d, maxBackoffMs);
    }
  }

  /** The outcome for one failure. {@code delayMs} is the wait before a retry. */
  public record Decision(Action action, long delayMs) {}

  public ErrorHandling {
    format = format == null ? FORMAT : format;
    if (!FORMAT.equals(format)) {
      throw new InvalidViewDefinitionException("error_handling has format '" + format
          + "'; this engine reads '" + FORMAT + "'");
    }
    rules = rules == null ? List.of() : List.copyOf(rules);
    if (maxSkipCount != null && maxSkipCount < 0) {
      throw new InvalidViewDefinitionException("error_handling max_skip_count must be >= 0");
    }
    if (maxSkipFraction != null && (maxSkipFraction < 0 || maxSkipFraction > 1)) {
      throw new InvalidViewDefinitionException(
          "error_handling max_skip_fraction must be between 0 and 1, got " + maxSkipFraction);
    }
    faultIsolation = faultIsolation == null ? FaultIsolation.SKIP_ROWS : faultIsolation;
  }

  /**
   * Decides for the {@code failedAttempts}-th failure (1 after the first call failed) of one
   * item.
   */
  public Decision decide(Throwable error, int failedAttempts) {
    String text = failureText(error);
    for (Rule r : rules) {
      if (!r.matches(text)) {
        continue;
      }
      if (r.action() == Action.RETRY) {
        if (failedAttempts < r.maxAttempts()) {
          return new Decision(Action.RETRY, r.delayMs(failedAttempts));
        }
        continue; // attempts used up: later rules decide
      }
      return new Decision(r.action(), 0);
    }
    return new Decision(Action.FAIL, 0);
  }

  /**
   * Throws when {@code skipped} of {@code total} items exceeds a threshold; the refresh then
   * commits nothing.
   */
  public void checkSkips(long skipped, long total, String what) {
    if (maxSkipCount != null && skipped > maxSkipCount) {
      throw new MaterializedViewException(skipped + " " + what + " were skipped, more than "
          + "error_handling.max_skip_count = " + maxSkipCount + "; the refresh committed nothing");
    }
    if (maxSkipFraction != null && total > 0 && (double) skipped / total > maxSkipFraction) {
      throw new MaterializedViewException(String.format(Locale.ROOT, "%d of %d %s were skipped "
          + "(%.4f), more than error_handling.max_skip_fraction = %s; the refresh committed "
          + "nothing", skipped, total, what, (double) skipped / total, maxSkipFraction));
    }
  }

  static String failureText(Throwable error) {
    StringBuilder sb = new StringBuilder();
    for (Throwable t = error; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (sb.length() > 0) {
        sb.append('\n');
      }
      sb.append(t.getClass().getName()).append(": ").append(t.getMessage());
    }
    return sb.toString();
  }

  public String toJson() {
    return DefinitionJson.write(this);
  }

  /** Reads the JSON; enum values are case-insensitive ({@code "retry"}, {@code "RETRY"}). */
  public static ErrorHandling fromJson(String json) {
    if (json == null || json.isBlank()) {
      return FAIL;
    }
    return DefinitionJson.read(json, ErrorHandling.class, "error_handling");
  }

  /** The wire field is a JSON object (spec: object); accepts a parsed tree too. */
  public static ErrorHandling fromWire(Object value) {
    if (value == null) {
      return FAIL;
    }
    if (value instanceof String s) {
      return fromJson(s);
    }
    return fromJson(LanceJson.mapper().valueToTree(value).toString());
  }
}
