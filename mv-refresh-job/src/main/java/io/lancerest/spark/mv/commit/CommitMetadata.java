package io.lancerest.spark.mv.commit;

import io.lancerest.spark.mv.layout.GenevaLayout;
import io.lancerest.spark.mv.rowindex.FragmentSourceRanges;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * The metadata side of a {@link ViewCommit}: schema and field metadata upserted into the read
 * version's schema, with the fragments' source ranges and the refresh job recorded, plus the
 * config and transaction properties committed with them.
 */
final class CommitMetadata {
  private final String location;
  private final Map<String, String> schemaMetadata;
  /** The caller set {@link FragmentSourceRanges#KEY} itself: then it is not merged. */
  private final boolean rangesGiven;
  private final Map<String, Map<String, String>> fieldMetadata;
  private final Map<String, String> config;
  private final Map<String, String> transactionProperties;
  private final ViewCommit.Job job;

  CommitMetadata(String location, Map<String, String> schemaMetadata,
      Map<String, Map<String, String>> fieldMetadata, Map<String, String> config,
      Map<String, String> transactionProperties, ViewCommit.Job job) {
    this.location = location;
    this.schemaMetadata = new LinkedHashMap<>(schemaMetadata);
    this.rangesGiven = schemaMetadata.containsKey(FragmentSourceRanges.KEY);
    this.fieldMetadata = new LinkedHashMap<>(fieldMetadata);
    this.config = new LinkedHashMap<>(config);
    this.transactionProperties = new LinkedHashMap<>(transactionProperties);
    this.job = job;
  }

  /** Records the source ranges (unless the caller gave them) and the job, with its counts. */
  void record(CommitFragments.Applied applied) {
    if (!rangesGiven) {
      Map<Integer, Long> rows = new java.util.HashMap<>();
      applied.fragments().forEach(f -> rows.put(f.getId(), f.getPhysicalRows()));
      // null (no entries) removes the key
      schemaMetadata.put(FragmentSourceRanges.KEY,
          FragmentSourceRanges.format(applied.ranges(), rows));
    }
    if (job != null) {
      schemaMetadata.put(GenevaLayout.LAST_JOB, GenevaLayout.lastJobJson(job.id(),
          job.status().name(), job.kind(), job.sourceVersion(), applied.added(),
          applied.deleted(), System.currentTimeMillis()));
      transactionProperties.put(GenevaLayout.JOB_ID, job.id());
      transactionProperties.put(GenevaLayout.KIND, job.kind().wire());
    }
  }

  /** Records the indexes the commit carries ({@link IndexCarry#KEY}; {@code null}: none). */
  void carriedIndexes(String record) {
    schemaMetadata.put(IndexCarry.KEY, record);
  }

  Map<String, String> config() {
    return config;
  }

  Map<String, String> transactionProperties() {
    return transactionProperties;
  }

  /** {@code current} with the schema and field metadata of this commit upserted. */
  Schema schema(Schema current) {
    Map<String, String> meta = new LinkedHashMap<>(
        current.getCustomMetadata() == null ? Map.of() : current.getCustomMetadata());
    schemaMetadata.forEach((k, v) -> {
      if (v == null) {
        meta.remove(k);
      } else {
        meta.put(k, v);
      }
    });
    Map<String, Map<String, String>> pending = new LinkedHashMap<>(fieldMetadata);
    List<Field> fields = new ArrayList<>();
    for (Field f : current.getFields()) {
      Map<String, String> extra = pending.remove(f.getName());
      if (extra == null) {
        fields.add(f);
        continue;
      }
      Map<String, String> fm = new LinkedHashMap<>(f.getMetadata());
      extra.forEach((k, v) -> {
        if (v == null) {
          fm.remove(k);
        } else {
          fm.put(k, v);
        }
      });
      FieldType t = new FieldType(f.isNullable(), f.getType(), f.getDictionary(), fm);
      fields.add(new Field(f.getName(), t, f.getChildren()));
    }
    if (!pending.isEmpty()) {
      throw new ViewCommitException("Field metadata names columns " + pending.keySet()
          + " that view table '" + location + "' does not have");
    }
    return new Schema(fields, meta);
  }
}
