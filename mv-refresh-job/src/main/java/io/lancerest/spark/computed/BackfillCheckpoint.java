package io.lancerest.spark.computed;

import java.util.Map;
import java.util.TreeSet;

/**
 * Which fragments of a table hold a computed column's values for its current definition, kept in
 * the table's config: {@code lancerest::computed::<column>::udf_sha} and {@code ...::field_id}
 * (the definition they were computed with and the column's Lance field id; another one, as after
 * the column was dropped and added again, means nothing is done) and {@code ...::done} (fragment
 * ids as ranges, {@code 0-41,45}). Fragment ids are never reused, and appends and UPDATEs bring new
 * fragments, so a fragment recorded here needs no work until the definition changes.
 */
public record BackfillCheckpoint(String column, String udfSha, int fieldId,
    TreeSet<Long> done) {
  static final String PREFIX = "lancerest::computed::";

  static String shaKey(String column) {
    return PREFIX + column + "::udf_sha";
  }

  static String fieldKey(String column) {
    return PREFIX + column + "::field_id";
  }

  static String doneKey(String column) {
    return PREFIX + column + "::done";
  }

  /** The checkpoint in {@code config} for a definition with {@code udfSha}. */
  public static BackfillCheckpoint read(Map<String, String> config, String column,
      String udfSha, int fieldId) {
    TreeSet<Long> done = new TreeSet<>();
    if (udfSha.equals(config.get(shaKey(column)))
        && Integer.toString(fieldId).equals(config.get(fieldKey(column)))) {
      String v = config.get(doneKey(column));
      if (v != null && !v.isBlank()) {
        for (String part : v.split(",")) {
          int dash = part.indexOf('-');
          if (dash < 0) {
            done.add(Long.parseLong(part.trim()));
          } else {
            long from = Long.parseLong(part.substring(0, dash).trim());
            long to = Long.parseLong(part.substring(dash + 1).trim());
            for (long i = from; i <= to; i++) {
              done.add(i);
            }
          }
        }
      }
    }
    return new BackfillCheckpoint(column, udfSha, fieldId, done);
  }

  /** Whether this fragment holds the column's values. */
  public boolean isDone(long fragmentId) {
    return done.contains(fragmentId);
  }

  /**
   * {@link #isDone} for a fragment as the table now has it: also a file of the fragment must hold
   * the column (a checkpoint that outlived its column never vouches for a fragment without it).
   */
  public boolean isDone(org.lance.FragmentMetadata m) {
    return isDone(m.getId()) && FragmentTask.columnFile(m, fieldId) != null;
  }

  /**
   * Whether {@code ds}'s column of this name is the one this checkpoint is for: the same Lance
   * field id and the same definition (not dropped and added again, nor redefined, since).
   */
  public boolean describes(org.lance.Dataset ds) {
    for (org.lance.schema.LanceField f : ds.getLanceSchema().fields()) {
      if (f.getName().equals(column)) {
        ComputedColumn def = ComputedColumn.fromMetadata("", column,
            ds.getSchema().findField(column).getMetadata());
        return f.getId() == fieldId && def != null
            && def.function().sha256Hex().equals(udfSha);
      }
    }
    return false;
  }

  /** The config entries recording {@link #done} plus {@code more}. */
  public Map<String, String> with(Iterable<Long> more) {
    TreeSet<Long> all = new TreeSet<>(done);
    more.forEach(all::add);
    return Map.of(shaKey(column), udfSha, fieldKey(column), Integer.toString(fieldId),
        doneKey(column), ranges(all));
  }

  static String ranges(TreeSet<Long> ids) {
    StringBuilder b = new StringBuilder();
    Long start = null;
    Long prev = null;
    for (long id : ids) {
      if (start != null && id == prev + 1) {
        prev = id;
        continue;
      }
      if (start != null) {
        append(b, start, prev);
      }
      start = id;
      prev = id;
    }
    if (start != null) {
      append(b, start, prev);
    }
    return b.toString();
  }

  private static void append(StringBuilder b, long from, long to) {
    if (b.length() > 0) {
      b.append(',');
    }
    b.append(from);
    if (to > from) {
      b.append('-').append(to);
    }
  }
}
