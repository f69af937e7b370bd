package io.lancerest.spark.mv.fragments;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.lance.Fragment;
import org.lance.FragmentMetadata;
import org.lance.Transaction;
import org.lance.fragment.DataFile;
import org.lance.operation.Append;
import org.lance.operation.CreateIndex;
import org.lance.operation.DataReplacement;
import org.lance.operation.Delete;
import org.lance.operation.Operation;
import org.lance.operation.Overwrite;
import org.lance.operation.Project;
import org.lance.operation.ReserveFragments;
import org.lance.operation.Rewrite;
import org.lance.operation.Update;
import org.lance.operation.UpdateConfig;
import org.roaringbitmap.longlong.Roaring64NavigableMap;

/**
 * What the commits of a source table after one version did, read from their transactions: the
 * existing rows they may have changed in place, and whether they changed any row at all.
 *
 * <p>Why a refresh needs it: a row a compaction moved to a new fragment keeps its stable row
 * id, and an incremental refresh keeps what it derived from that row when the row's {@code
 * _row_last_updated_at_version} is not after the watermark. lance-core's own {@code
 * Dataset.compact} keeps that version, but lance-spark 0.4.0's {@code OPTIMIZE} (lance-core's
 * distributed compaction: a plan, tasks, a commit) writes fragments without it, and lance-core
 * then reports version 1 for every row in them. A row changed in place after the watermark
 * (same row id: {@code merge_insert}, an update that rewrites columns) and then moved by such a
 * compaction would look unchanged. The transactions still tell: the changed rows are those of
 * the fragments an {@code Update} wrote or rewrote, or whose data a {@code DataReplacement}
 * replaced. Appends add rows with new ids, deletes and compactions ({@code Rewrite}) change no
 * value, index and config commits no row.
 *
 * An {@code Overwrite} (every commit of a materialized view, which can be a source too) keeps
 * the rows of the fragments it carried over unchanged; the rows of its other fragments count as
 * changed in place.
 *
 * <p>When the history cannot tell (a version removed by a cleanup, a commit without a
 * transaction file, a {@code Merge}, {@code Restore} or any other
 * operation, more than {@value #MAX_VERSIONS} versions), {@link #changedInPlace} is {@code
 * null} and callers treat every row that existed at the older version as possibly changed.
 */
public final class SourceHistory {
  /** Most versions read; a longer history counts as unknown (each is one manifest read). */
  static final int MAX_VERSIONS = 512;

  private final long from;
  private final long to;
  private final Roaring64NavigableMap changedInPlace;
  private final boolean rowsChanged;
  private final int compactions;
  private final String unknown;
  private final Touched touched;
  /** How {@link #moved} reads deletion files: as the history itself did. */
  private DeletionVectors.Reader deletions = DeletionVectors.DIRECT;

  private SourceHistory(long from, long to, Roaring64NavigableMap changedInPlace,
      boolean rowsChanged, int compactions, String unknown, Touched touched) {
    this.from = from;
    this.to = to;
    this.changedInPlace = unknown == null ? changedInPlace : null;
    this.rowsChanged = rowsChanged || unknown != null;
    this.compactions = compactions;
    this.unknown = unknown;
    this.touched = unknown == null && touched != null && touched.complete ? touched : null;
  }

  private SourceHistory(long from, long to, int compactions, String unknown) {
    this(from, to, null, true, compactions, unknown, null);
  }

  /**
   * The fragments the commits changed: the ids of fragments they updated, rewrote or removed
   * (fragments of the older version, or made in between), and the first data files of the
   * fragments they wrote. Every other fragment of the newer version is as it was at the older
   * one. Complete only when every commit's operation says so ({@code Overwrite}, {@code
   * Project} and the operations the history cannot tell do not).
   */
  public static final class Touched {
    final java.util.Set<Integer> ids = new java.util.TreeSet<>();
    final java.util.Set<String> written = new java.util.HashSet<>();
    boolean complete = true;

    void write(List<FragmentMetadata> fragments) {
      for (FragmentMetadata f : fragments) {
        if (f.getFiles() == null || f.getFiles().isEmpty()) {
          complete = false;
        } else {
          written.add(f.getFiles().get(0).getPath());
        }
      }
    }

    void change(List<FragmentMetadata> fragments) {
      fragments.forEach(f -> ids.add(f.getId()));
    }

    /** Fragment ids the commits updated, rewrote or removed. */
    public java.util.Set<Integer> ids() {
      return java.util.Collections.unmodifiableSet(ids);
    }

    /** First data files of the fragments the commits wrote. */
    public java.util.Set<String> written() {
      return java.util.Collections.unmodifiableSet(written);
    }
  }

  /**
   * The commits after version {@code from} up to {@code now}'s version, read through {@code
   * now} (any version of the table; the others are checked out from it).
   */
  public static SourceHistory after(org.lance.Dataset now, long from) {
    return after(now, from, null, DeletionVectors.DIRECT);
  }

  /**
   * {@link #after(org.lance.Dataset, long)} with {@code now}'s fragments already listed: a
   * fragment a commit wrote is looked up there by its data file, and only when it is not (a
   * later commit replaced it) among the fragments of that commit's version.
   */
  public static SourceHistory after(org.lance.Dataset now, long from,
      List<FragmentMetadata> nowFragments, DeletionVectors.Reader deletions) {
    long to = now.version();
    if (to - from > MAX_VERSIONS) {
      return new SourceHistory(from, to, 0, (to - from) + " versions since "
          + "version " + from + " (more than " + MAX_VERSIONS + " are not read)");
    }
    Map<String, FragmentMetadata> nowByFile = nowFragments == null ? null : byFile(nowFragments);
    Roaring64NavigableMap changed = new Roaring64NavigableMap();
    Touched touched = new Touched();
    boolean rowsChanged = false;
    int compactions = 0;
    for (long v = from + 1; v <= to; v++) {
      try (org.lance.Dataset opened = v == to ? null : now.checkoutVersion(v)) {
        org.lance.Dataset at = opened == null ? now : opened;
        Optional<Transaction> txn = at.readTransaction();
        if (txn.isEmpty()) {
          return new SourceHistory(from, to, compactions, "version " + v
              + " has no transaction file");
        }
        try (Transaction t = txn.get()) {
          Operation op = t.operation();
          if (op instanceof Rewrite r) {
            compactions++;
            for (org.lance.operation.RewriteGroup g : r.groups()) {
              touched.change(g.oldFragments());
              touched.write(g.newFragments());
            }
          } else if (op instanceof ReserveFragments || op instanceof UpdateConfig
              || op instanceof CreateIndex) {
            // fragment ids reserved for a compaction, config or metadata, an index: no row
          } else if (op instanceof Append a) {
            rowsChanged = true; // new row ids: no value changed
            touched.write(a.fragments());
          } else if (op instanceof Delete d) {
            rowsChanged = true; // rows removed: no value changed
            touched.change(d.updatedFragments());
            d.deletedFragmentIds().forEach(id -> touched.ids.add(id.intValue()));
          } else if (op instanceof Project) {
            rowsChanged = true; // columns dropped: no value changed; the fragments' files
            touched.complete = false; // now describe other columns
          } else if (op instanceof Update u) {
            rowsChanged = true;
            touched.change(u.updatedFragments());
            u.removedFragmentIds().forEach(id -> touched.ids.add(id.intValue()));
            touched.write(u.newFragments());
            List<FragmentMetadata> written = new ArrayList<>(byFiles(at, nowByFile,
                u.newFragments()));
            if (u.updateMode().orElse(null) != Update.UpdateMode.RewriteRows) {
              // columns rewritten in the updated fragments (or a mode not told): every row
              written.addAll(byIds(at, u.updatedFragments().stream()
                  .map(f -> (long) f.getId()).toList()));
            }
            for (FragmentMetadata f : written) {
              changed.or(liveRowIds(at, f, deletions));
            }
          } else if (op instanceof DataReplacement d) {
            rowsChanged = true;
            for (FragmentMetadata f : byIds(at, d.replacements().stream()
                .map(DataReplacement.DataReplacementGroup::fragmentId).toList())) {
              touched.ids.add(f.getId());
              changed.or(liveRowIds(at, f, deletions));
            }
          } else if (op instanceof Overwrite) {
            touched.complete = false;
            // Every commit to a materialized view is one (a view can be a source). The
            // fragments it kept hold the rows they held, with their values; any other
            // fragment's rows count as changed in place (a plain INSERT OVERWRITE may give its
            // rows ids that rows of the table had before).
            rowsChanged = true;
            Map<Integer, FragmentMetadata> previous = new HashMap<>();
            String schemaBefore;
            try (org.lance.Dataset p = now.checkoutVersion(v - 1)) {
              p.getFragments().forEach(f -> previous.put(f.getId(), f.metadata()));
              schemaBefore = layout(p.getLanceSchema().fields());
            }
            if (!schemaBefore.equals(layout(at.getLanceSchema().fields()))) {
              // field ids re-assigned or columns changed: a kept data file may now be read
              // as another column
              throw new Unknown("an Overwrite that changed the schema");
            }
            int kept = 0;
            for (Fragment f : at.getFragments()) {
              FragmentMetadata was = previous.get(f.getId());
              if (was == null || !FragmentDiff.sameData(was, f.metadata())) {
                changed.or(liveRowIds(at, f.metadata(), deletions));
              } else {
                kept++;
              }
            }
            if (kept == 0 && !previous.isEmpty()) {
              // the table was replaced (INSERT OVERWRITE): rebuilding is cheaper than comparing
              throw new Unknown("an Overwrite that kept none of the fragments");
            }
          } else {
            return new SourceHistory(from, to, compactions, "version " + v
                + " is " + article(op.name()) + " " + op.name());
          }
        }
      } catch (Unknown e) {
        return new SourceHistory(from, to, compactions, "version " + v + ": "
            + e.getMessage());
      } catch (RuntimeException e) {
        // checked out from a dataset that is open: a version that is gone was cleaned up
        return new SourceHistory(from, to, compactions, "version " + v
            + " cannot be read (" + e.getMessage() + ")");
      } catch (Exception e) {
        return new SourceHistory(from, to, compactions, "the row ids of version "
            + v + " cannot be read (" + e + ")");
      }
    }
    SourceHistory h = new SourceHistory(from, to, changed, rowsChanged, compactions, null,
        touched);
    h.deletions = deletions;
    return h;
  }

  /**
   * What the commits changed ({@link Touched}), or {@code null} when the history cannot tell or
   * a commit's operation does not say ({@code Overwrite}, {@code Project}).
   */
  public Touched touched() {
    return touched;
  }

  /**
   * The row ids of rows that existed before and that the commits may have changed in place,
   * or {@code null} when the history cannot tell ({@link #unknown}).
   */
  public Roaring64NavigableMap changedInPlace() {
    return changedInPlace;
  }

  /**
   * Whether every commit kept every row with its values: only compactions, fragment id
   * reservations, config and index commits (never when the history cannot tell).
   */
  public boolean rowsUnchanged() {
    return !rowsChanged;
  }

  /**
   * Rows a compaction only moved: of {@code fragments} of {@code now} (the newer version this
   * history ends at), those whose every live row existed at the older version with a row id in
   * {@code before} and was not changed in place. Those rows hold the values they had then, so
   * what a view derived from them is still right, and such fragments need no reading at all.
   * None when the history cannot tell.
   *
   * @param before row ids the older version had in the fragments that changed since
   */
  public Moved moved(org.lance.Dataset now, List<Integer> fragments,
      Roaring64NavigableMap before) throws Exception {
    return moved(now, FragmentDiff.metadata(now.getFragments()), fragments, before);
  }

  /** {@link #moved(org.lance.Dataset, List, Roaring64NavigableMap)}, {@code now} listed. */
  public Moved moved(org.lance.Dataset now, List<FragmentMetadata> nowFragments,
      List<Integer> fragments, Roaring64NavigableMap before) throws Exception {
    Moved out = new Moved(new ArrayList<>(), new Roaring64NavigableMap(), 0);
    if (changedInPlace == null || fragments.isEmpty() || before.isEmpty()) {
      return out;
    }
    Map<Integer, FragmentMetadata> byId = new HashMap<>();
    for (FragmentMetadata f : nowFragments) {
      byId.put(f.getId(), f);
    }
    long rows = 0;
    for (int id : fragments) {
      FragmentMetadata f = byId.get(id);
      if (f == null) {
        continue;
      }
      Roaring64NavigableMap live = liveRowIds(now, f, deletions);
      Roaring64NavigableMap outside = new Roaring64NavigableMap();
      outside.or(live);
      outside.andNot(before);
      Roaring64NavigableMap changed = new Roaring64NavigableMap();
      changed.or(live);
      changed.and(changedInPlace);
      if (outside.isEmpty() && changed.isEmpty()) {
        out.fragments().add(id);
        out.ids().or(live);
        rows += f.getPhysicalRows();
      }
    }
    return new Moved(out.fragments(), out.ids(), rows);
  }

  /**
   * Fragments that only hold rows a compaction moved unchanged, their live row ids and their
   * physical rows.
   */
  public record Moved(List<Integer> fragments, Roaring64NavigableMap ids, long physicalRows) {}

  /** Compactions among the commits (those read). */
  public int compactions() {
    return compactions;
  }

  /** Why the history cannot tell, or {@code null}. */
  public String unknown() {
    return unknown;
  }

  @Override
  public String toString() {
    return "versions " + (from + 1) + " to " + to + ": " + (unknown != null
        ? "cannot tell (" + unknown + ")"
        : compactions + (compactions == 1 ? " compaction" : " compactions") + (rowsChanged
            ? ", " + changedInPlace.getLongCardinality() + " rows changed in place"
            : ", no row changed"));
  }

  /** What the history cannot tell, while reading it. */
  private static final class Unknown extends Exception {
    Unknown(String message) {
      super(message);
    }
  }

  private static String article(String name) {
    return "AEIOU".indexOf(Character.toUpperCase(name.isEmpty() ? 'x' : name.charAt(0))) >= 0
        ? "an" : "a";
  }

  private static Map<String, FragmentMetadata> byFile(List<FragmentMetadata> fragments) {
    Map<String, FragmentMetadata> byFile = new HashMap<>();
    for (FragmentMetadata f : fragments) {
      for (DataFile d : f.getFiles()) {
        byFile.put(d.getPath(), f);
      }
    }
    return byFile;
  }

  /**
   * The fragments of {@code at} that hold the data files of {@code written}: a transaction
   * names new fragments by their files (their ids and row ids are given at commit). Found in
   * {@code nowByFile} (the newest version's fragments) when they are still there, unchanged;
   * otherwise among {@code at}'s fragments, listed then.
   */
  private static List<FragmentMetadata> byFiles(org.lance.Dataset at,
      Map<String, FragmentMetadata> nowByFile, List<FragmentMetadata> written) throws Unknown {
    Map<String, FragmentMetadata> atByFile = null;
    List<FragmentMetadata> out = new ArrayList<>();
    for (FragmentMetadata w : written) {
      String file = w.getFiles().isEmpty() ? null : w.getFiles().get(0).getPath();
      FragmentMetadata f = file == null || nowByFile == null ? null : nowByFile.get(file);
      if (f != null && f.getDeletionFile() != null) {
        f = null; // deleted from since: its rows at that version are what counts
      }
      if (f == null && file != null) {
        if (atByFile == null) {
          atByFile = byFile(FragmentDiff.metadata(at.getFragments()));
        }
        f = atByFile.get(file);
      }
      if (f == null) {
        throw new Unknown("a fragment it wrote is not in its manifest");
      }
      out.add(f);
    }
    return out;
  }

  /** Field ids, names and types, at every depth (not the metadata, which views change). */
  private static String layout(List<org.lance.schema.LanceField> fields) {
    StringBuilder sb = new StringBuilder();
    for (org.lance.schema.LanceField f : fields) {
      sb.append(f.getId()).append(':').append(f.getName()).append(':')
          .append(f.getLogicalType()).append(':').append(f.isNullable())
          .append('(').append(layout(f.getChildren())).append(')');
    }
    return sb.toString();
  }

  private static List<FragmentMetadata> byIds(org.lance.Dataset at, List<Long> ids)
      throws Unknown {
    Map<Long, FragmentMetadata> byId = new HashMap<>();
    for (Fragment f : at.getFragments()) {
      byId.put((long) f.getId(), f.metadata());
    }
    List<FragmentMetadata> out = new ArrayList<>();
    for (long id : ids) {
      FragmentMetadata f = byId.get(id);
      if (f == null) {
        throw new Unknown("fragment " + id + " it changed is not in its manifest");
      }
      out.add(f);
    }
    return out;
  }

  /**
   * The row ids of the live rows of {@code f} in {@code ds}: from the fragment's row-id sequence
   * and deletion file ({@link FragmentRowIds}), otherwise from a row-id scan (no data file is
   * read).
   */
  static Roaring64NavigableMap liveRowIds(org.lance.Dataset ds, FragmentMetadata f,
      DeletionVectors.Reader deletions) throws Exception {
    Roaring64NavigableMap ids = FragmentRowIds.live(ds.uri(), f, deletions);
    return ids != null ? ids : FragmentDiff.rowIds(ds, List.of(f.getId()));
  }
}
