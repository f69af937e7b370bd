package io.lancerest.spark.mv.chunker;

import io.lancerest.spark.connector.LanceLocation;
import io.lancerest.spark.mv.definition.DefinitionJson;
import java.io.IOException;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.roaringbitmap.longlong.Roaring64NavigableMap;

/**
 * A chunker view's refresh state, as its last refresh commit left it: the parents processed
 * (expanded, with or without children), those cut by {@code output_limit}, those skipped under
 * {@code error_handling}, and how many filtered parents of the watermark version are not
 * processed.
 *
 * <p>Why a processed set at all: a parent that yielded no children leaves no row in the view, so
 * the view's own rows cannot tell it from a parent never expanded, and a skipped parent must be
 * told from a processed one. Why the skipped set: a refresh retries exactly those parents (they
 * stay in the source fragments the refresh does not read otherwise) instead of reading the whole
 * source to find the unprocessed ones.
 *
 * <p>Where it is kept. Every open of the view (each reader, each version) reads its manifest,
 * config included, so the config holds the sets only while they are small ({@value
 * #INLINE_MAX_CHARS} characters of base64 in all: dense ids compress to a few runs). Larger sets
 * go to a side file ({@link ParentStateFile}) written before the commit, and the config holds a
 * pointer to it ({@value #POINTER_KEY}: path, SHA-256, the watermark it was written at, and the
 * file of the version before, which stays so that restoring that version keeps its state); the
 * commit that replaces a pointer releases the file two refreshes back. Views written before the
 * sets could move (all three inline, no skipped set) are read as they are; their next refresh
 * writes the new form.
 *
 * <p>Engines that know only the inline keys. The file form sets the processed key to {@link
 * #IN_FILE}, which they refuse; but they refresh a view in the inline form (and rebuild any view
 * with {@code force}), writing the inline keys and leaving the pointer and the skipped key as
 * they were. So the processed key decides the form: the file is read only when it says {@link
 * #IN_FILE}, else the inline sets are the state whatever the pointer names; and the skipped set
 * is stamped with the watermark and the processed set it was written with, and used only when
 * both still match.
 */
final class ParentState {
  /** Config: where the sets are when they are not inline (JSON), or empty. */
  static final String POINTER_KEY = "lancerest::view::chunker::parent_state";
  /**
   * Config: parents skipped by the last refresh when the sets are inline: {@code
   * <watermark>:<stamp of the processed value>:<roaring bitmap, base64>}; empty in the file form.
   */
  static final String SKIPPED_KEY = "lancerest::view::chunker::skipped_parents";
  /** Most base64 characters the three sets keep in the config; beyond, a file holds them. */
  static final int INLINE_MAX_CHARS = 4096;
  /**
   * The value of the processed and truncated keys while the sets are in a file: not base64, so
   * an engine that only knows the inline form refuses the view instead of reading an empty
   * processed set (which would expand every parent again beside its children).
   */
  static final String IN_FILE = "in " + POINTER_KEY;

  final Roaring64NavigableMap processed;
  final Roaring64NavigableMap truncated;
  /**
   * {@code null} when not known: the last refresh did not record it (an older engine's), or
   * recorded it for another state than the one the view holds.
   */
  final Roaring64NavigableMap skipped;
  /** Filtered parents of the watermark version not processed; {@code -1} when not recorded. */
  final long unprocessed;
  /** The pointer as read ({@code null}: none), whose files the next commit keeps or releases. */
  final Pointer pointer;
  /** Why the sets could not be read (the refresh then rebuilds the view), or {@code null}. */
  final String lost;

  private ParentState(Roaring64NavigableMap processed, Roaring64NavigableMap truncated,
      Roaring64NavigableMap skipped, long unprocessed, Pointer pointer, String lost) {
    this.processed = processed;
    this.truncated = truncated;
    this.skipped = skipped;
    this.unprocessed = unprocessed;
    this.pointer = pointer;
    this.lost = lost;
  }

  /**
   * Where the sets are: {@code file} (relative to the view's root, with its {@code sha256} and
   * the {@code watermark} the refresh that wrote it committed), or inline when {@code null};
   * {@code previous}: the file of the version before, kept.
   */
  record Pointer(String file, String sha256, Long watermark, String previous) {
    String json() {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("format", 1);
      m.put("file", file);
      m.put("sha256", sha256);
      m.put("watermark", watermark);
      m.put("previous", previous);
      return DefinitionJson.write(m);
    }

    static Pointer parse(String value) {
      if (value == null || value.isBlank()) {
        return null;
      }
      Map<?, ?> m;
      try {
        m = DefinitionJson.read(value, Map.class, "chunker state pointer");
      } catch (RuntimeException e) {
        throw altered(POINTER_KEY, e.getMessage(), e);
      }
      Object format = m.get("format");
      String file = text(m, "file");
      String sha = text(m, "sha256");
      Object watermark = m.get("watermark");
      String previous = text(m, "previous");
      if (!(format instanceof Number n) || n.intValue() != 1) {
        throw altered(POINTER_KEY, "format " + format + ", this engine reads format 1", null);
      }
      if (file != null && (!ParentStateFile.isPath(file) || sha == null
          || !(watermark instanceof Number))
          || previous != null && !ParentStateFile.isPath(previous)) {
        throw altered(POINTER_KEY, "'" + value + "' names no state file", null);
      }
      return new Pointer(file, sha, file == null ? null : ((Number) watermark).longValue(),
          previous);
    }

    private static String text(Map<?, ?> m, String key) {
      Object v = m.get(key);
      return v == null ? null : v.toString();
    }
  }

  /** No parent processed: what a rebuild starts from; {@code read} is kept for its files. */
  static ParentState none(Pointer read) {
    return new ParentState(ParentIds.empty(), ParentIds.empty(), ParentIds.empty(), -1, read,
        null);
  }

  /**
   * The state in {@code config} (the view's, at the version the refresh read, whose watermark
   * is {@code watermark}), its sets read from the file the config points to when they are not
   * inline; {@code sets = false} reads only the pointer (a rebuild uses no set).
   */
  static ParentState read(Map<String, String> config, long watermark, LanceLocation view,
      boolean sets) {
    if (!sets) {
      // a rebuild replaces the state whatever it was: a pointer it cannot read releases nothing
      try {
        return none(Pointer.parse(config.get(POINTER_KEY)));
      } catch (ChunkerRefreshException altered) {
        return none(null);
      }
    }
    Pointer pointer = Pointer.parse(config.get(POINTER_KEY));
    long unprocessed = unprocessed(ChunkerRefresh.configValue(config,
        ChunkerRefresh.UNPROCESSED_KEY));
    String processed = ChunkerRefresh.configValue(config, ChunkerRefresh.PROCESSED_KEY);
    if (!IN_FILE.equals(processed)) {
      // Inline: the state, even when the pointer names a file (an engine that knows only the
      // inline keys wrote them, and left the pointer of an earlier version).
      return new ParentState(ParentIds.fromBase64(processed, "processed parent set"),
          inline(ChunkerRefresh.configValue(config, ChunkerRefresh.TRUNCATED_KEY),
              "truncated parent set"),
          skipped(config.get(SKIPPED_KEY), watermark, processed), unprocessed, pointer, null);
    }
    if (pointer == null || pointer.file() == null) {
      throw altered(ChunkerRefresh.PROCESSED_KEY, "the parent sets are said to be in a file, "
          + "but " + POINTER_KEY + " names none", null);
    }
    if (pointer.watermark() != watermark) {
      return lost(pointer, "chunker state " + pointer.file() + " was written at source version "
          + pointer.watermark() + ", not at the view's watermark " + watermark);
    }
    List<byte[]> stored;
    try {
      stored = ParentStateFile.read(view, pointer.file());
    } catch (IOException e) {
      return lost(pointer, "chunker state " + pointer.file() + " cannot be read ("
          + LanceLocation.withoutUserInfo(String.valueOf(e.getMessage())) + ")");
    }
    if (!ParentStateFile.sha256(stored).equals(pointer.sha256())) {
      return lost(pointer, "chunker state " + pointer.file() + " does not match the "
          + "checksum its config records");
    }
    try {
      return new ParentState(ParentIds.fromBytes(stored.get(0)),
          ParentIds.fromBytes(stored.get(1)), ParentIds.fromBytes(stored.get(2)), unprocessed,
          pointer, null);
    } catch (RuntimeException e) {
      return lost(pointer, "chunker state " + pointer.file() + " cannot be decoded ("
          + e.getMessage() + ")");
    }
  }

  private static ParentState lost(Pointer pointer, String why) {
    return new ParentState(ParentIds.empty(), ParentIds.empty(), ParentIds.empty(), -1,
        pointer, why);
  }

  private static long unprocessed(String value) {
    try {
      return value == null ? -1 : Long.parseLong(value.trim());
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  private static Roaring64NavigableMap inline(String value, String what) {
    if (IN_FILE.equals(value)) {
      throw altered(ChunkerRefresh.TRUNCATED_KEY, "the " + what + " is said to be in a file, "
          + "but the processed parent set is inline", null);
    }
    return ParentIds.fromBase64(value, what);
  }

  /** What the skipped key holds for a commit at {@code watermark} with {@code processed}. */
  static String stampSkipped(long watermark, String processed, String skippedBase64) {
    return watermark + ":" + stamp(processed) + ":" + skippedBase64;
  }

  /**
   * The skipped set in {@code value}, or {@code null} when it was written with another
   * watermark or processed set than the view's (an engine that does not know the key
   * committed since) or in no known form.
   */
  private static Roaring64NavigableMap skipped(String value, long watermark, String processed) {
    String[] parts = value == null ? new String[0] : value.split(":", 3);
    if (parts.length != 3 || !parts[0].equals(String.valueOf(watermark))
        || !parts[1].equals(stamp(processed))) {
      return null;
    }
    return ParentIds.fromBase64(parts[2], "skipped parent set");
  }

  /** The first 16 hex digits of the SHA-256 of a processed key's value. */
  private static String stamp(String processed) {
    try {
      byte[] d = java.security.MessageDigest.getInstance("SHA-256").digest(
          String.valueOf(processed).getBytes(java.nio.charset.StandardCharsets.UTF_8));
      return java.util.HexFormat.of().formatHex(d, 0, 8);
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing from this JVM", e);
    }
  }

  private static ChunkerRefreshException altered(String key, String what, Throwable cause) {
    return new ChunkerRefreshException("The view's config entry " + key + " cannot be read ("
        + what + "); the view table's config was altered. Run the refresh with force = true: "
        + "it rebuilds the view and writes its state anew", cause);
  }

  /**
   * Whether a refresh may read only the source fragments changed since the watermark: every
   * filtered parent of the watermark version is processed, or those that are not are exactly
   * the skipped ones, which the refresh retries by id.
   */
  boolean allowsChangedFragmentsOnly() {
    return truncated.isEmpty() && (unprocessed == 0
        || skipped != null && unprocessed == skipped.getLongCardinality());
  }

  /**
   * The state after a refresh, for its commit: the config entries and, when the sets go to a
   * file, that file, written now.
   *
   * @param written the folder of the file written for this commit ({@code null}: inline): the
   *     commit removes it when it does not land
   * @param released the folder this commit no longer needs kept ({@code null}: none): removed
   *     once it landed
   */
  record Staged(Map<String, String> config, String written, String released) {}

  /**
   * Stages {@code processed}, {@code truncated} and {@code skipped} after state {@code read}, for
   * a commit that sets the watermark to {@code watermark} ({@code viewName}: how errors name the
   * view).
   */
  static Staged stage(String viewName, LanceLocation view, Pointer read, long watermark,
      Roaring64NavigableMap processed, Roaring64NavigableMap truncated,
      Roaring64NavigableMap skipped, long unprocessed) {
    List<byte[]> sets = List.of(ParentIds.toBytes(processed), ParentIds.toBytes(truncated),
        ParentIds.toBytes(skipped));
    long chars = 0;
    for (byte[] s : sets) {
      chars += (s.length + 2) / 3 * 4;
    }
    // The version read keeps its file (restoring it stays incremental); the one before goes.
    String previous = read == null ? null : read.file();
    String released = read == null || read.previous() == null
        || read.previous().equals(previous) ? null
        : ParentStateFile.folder(view, read.previous());
    Map<String, String> config = new LinkedHashMap<>();
    config.put(ChunkerRefresh.UNPROCESSED_KEY, String.valueOf(unprocessed));
    if (chars <= INLINE_MAX_CHARS) {
      Base64.Encoder b64 = Base64.getEncoder();
      String processedValue = b64.encodeToString(sets.get(0));
      config.put(ChunkerRefresh.PROCESSED_KEY, processedValue);
      config.put(ChunkerRefresh.TRUNCATED_KEY, b64.encodeToString(sets.get(1)));
      config.put(SKIPPED_KEY, stampSkipped(watermark, processedValue,
          b64.encodeToString(sets.get(2))));
      config.put(POINTER_KEY, previous == null ? ""
          : new Pointer(null, null, null, previous).json());
      return new Staged(config, null, released);
    }
    String path = ParentStateFile.newPath();
    try {
      ParentStateFile.write(view, path, sets);
    } catch (IOException e) {
      throw new ChunkerRefreshException("Cannot write the chunker state of view " + viewName
          + " (" + LanceLocation.withoutUserInfo(String.valueOf(e.getMessage())) + "); nothing "
          + "was committed. Check that the view's location is writable and run the refresh "
          + "again", e);
    }
    config.put(ChunkerRefresh.PROCESSED_KEY, IN_FILE);
    config.put(ChunkerRefresh.TRUNCATED_KEY, IN_FILE);
    config.put(SKIPPED_KEY, "");
    config.put(POINTER_KEY, new Pointer(path, ParentStateFile.sha256(sets), watermark,
        previous).json());
    return new Staged(config, ParentStateFile.folder(view, path), released);
  }
}
