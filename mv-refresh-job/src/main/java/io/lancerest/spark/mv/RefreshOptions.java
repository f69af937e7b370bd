package io.lancerest.spark.mv;

import io.lancerest.client.model.RefreshMaterializedViewRequest;
import io.lancerest.spark.mv.definition.MaterializedViewKind;
import io.lancerest.spark.mv.error.InvalidOptionException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Options of one refresh: the fields of the spec's RefreshMaterializedViewRequest plus this
 * engine's {@code job_id}, {@code force} and {@code wait} (accessor {@code await()}: a
 * server-managed refresh waits for the server's job to end and returns its outcome). The same names serve SQL ({@code REFRESH ... WITH
 * (src_version = 12)}), the Java API and, dashed, the RefreshJob CLI ({@code --src-version 12}).
 * {@code null} means "engine default".
 */
public record RefreshOptions(Long srcVersion, Integer concurrency, Integer maxRowsPerFragment,
    Integer intraApplierConcurrency, Integer sourceTaskSize, Long outputLimit, String cluster,
    String manifest, String jobId, boolean force, boolean await) {
  public static final RefreshOptions DEFAULTS =
      new RefreshOptions(null, null, null, null, null, null, null, null, null, false);

  /** Option names, in documentation order. */
  public static final List<String> NAMES = List.of("src_version", "concurrency",
      "max_rows_per_fragment", "intra_applier_concurrency", "source_task_size", "output_limit",
      "cluster", "manifest", "job_id", "force", "wait");

  /** Options that do not wait for a server-managed refresh ({@code wait} false). */
  public RefreshOptions(Long srcVersion, Integer concurrency, Integer maxRowsPerFragment,
      Integer intraApplierConcurrency, Integer sourceTaskSize, Long outputLimit, String cluster,
      String manifest, String jobId, boolean force) {
    this(srcVersion, concurrency, maxRowsPerFragment, intraApplierConcurrency, sourceTaskSize,
        outputLimit, cluster, manifest, jobId, force, false);
  }

  public RefreshOptions {
    nonNegative("src_version", srcVersion);
    positive("concurrency", concurrency);
    positive("max_rows_per_fragment", maxRowsPerFragment);
    positive("intra_applier_concurrency", intraApplierConcurrency);
    positive("source_task_size", sourceTaskSize);
    nonNegative("output_limit", outputLimit);
  }

  public static Builder builder() {
    return new Builder();
  }

  /** A builder holding these options. */
  public Builder toBuilder() {
    return new Builder().srcVersion(srcVersion).concurrency(concurrency)
        .maxRowsPerFragment(maxRowsPerFragment).intraApplierConcurrency(intraApplierConcurrency)
        .sourceTaskSize(sourceTaskSize).outputLimit(outputLimit).cluster(cluster)
        .manifest(manifest).jobId(jobId).force(force).await(await);
  }

  /** {@code value}, or {@code fallback} when the option is unset. */
  public static int orDefault(Integer value, int fallback) {
    return value == null ? fallback : value;
  }

  /** Builds options; an unset field means "engine default". */
  public static final class Builder {
    private Long srcVersion;
    private Integer concurrency;
    private Integer maxRowsPerFragment;
    private Integer intraApplierConcurrency;
    private Integer sourceTaskSize;
    private Long outputLimit;
    private String cluster;
    private String manifest;
    private String jobId;
    private boolean force;
    private boolean await;

    private Builder() {}

    public Builder srcVersion(Long v) {
      srcVersion = v;
      return this;
    }

    public Builder concurrency(Integer v) {
      concurrency = v;
      return this;
    }

    public Builder maxRowsPerFragment(Integer v) {
      maxRowsPerFragment = v;
      return this;
    }

    public Builder intraApplierConcurrency(Integer v) {
      intraApplierConcurrency = v;
      return this;
    }

    public Builder sourceTaskSize(Integer v) {
      sourceTaskSize = v;
      return this;
    }

    public Builder outputLimit(Long v) {
      outputLimit = v;
      return this;
    }

    public Builder cluster(String v) {
      cluster = v;
      return this;
    }

    public Builder manifest(String v) {
      manifest = v;
      return this;
    }

    public Builder jobId(String v) {
      jobId = v;
      return this;
    }

    public Builder force(boolean v) {
      force = v;
      return this;
    }

    /** A server-managed refresh: wait for the server's job to end ({@code wait = true}). */
    public Builder await(boolean v) {
      await = v;
      return this;
    }

    public RefreshOptions build() {
      return new RefreshOptions(srcVersion, concurrency, maxRowsPerFragment,
          intraApplierConcurrency, sourceTaskSize, outputLimit, cluster, manifest, jobId, force,
          await);
    }
  }

  /**
   * Reads {@code name → value} strings (SQL {@code WITH (...)}); names are case-insensitive,
   * and an unknown name is an error listing the known ones.
   */
  public static RefreshOptions fromMap(Map<String, String> options) {
    Map<String, String> o = new LinkedHashMap<>();
    options.forEach((k, v) -> {
      String key = k.toLowerCase(Locale.ROOT).replace('-', '_');
      if (!NAMES.contains(key)) {
        throw new InvalidOptionException("Unknown refresh option '" + k + "'; known options: "
            + String.join(", ", NAMES));
      }
      o.put(key, v);
    });
    return new RefreshOptions(longOf(o, "src_version"), intOf(o, "concurrency"),
        intOf(o, "max_rows_per_fragment"), intOf(o, "intra_applier_concurrency"),
        intOf(o, "source_task_size"), longOf(o, "output_limit"), o.get("cluster"),
        o.get("manifest"), o.get("job_id"), boolOf(o, "force"), boolOf(o, "wait"));
  }

  /** The spec request for server-managed refresh ({@code job_id} and {@code force} are ours). */
  public RefreshMaterializedViewRequest toWire(List<String> viewId) {
    return new RefreshMaterializedViewRequest().id(viewId).srcVersion(srcVersion)
        .maxRowsPerFragment(wide(maxRowsPerFragment)).concurrency(wide(concurrency))
        .intraApplierConcurrency(wide(intraApplierConcurrency))
        .sourceTaskSize(wide(sourceTaskSize)).cluster(cluster).outputLimit(outputLimit)
        .manifest(manifest);
  }

  /** Rejects {@code output_limit} on kinds other than chunker (the spec's 400). */
  public void checkApplicableTo(MaterializedViewKind kind) {
    if (outputLimit != null && kind != MaterializedViewKind.CHUNKER) {
      throw new InvalidOptionException("output_limit caps the rows of a chunker view; this view "
          + "is a " + kind.wire() + " view. Remove output_limit (use the source query's LIMIT "
          + "for a query view)");
    }
  }

  private static Long wide(Integer v) {
    return v == null ? null : v.longValue();
  }

  /** A count the wire gives as a 64-bit integer, for an option this engine keeps in 32 bits. */
  public static Integer narrow(String name, Long v) {
    if (v == null) {
      return null;
    }
    if (v > Integer.MAX_VALUE || v < Integer.MIN_VALUE) {
      throw new InvalidOptionException(name + " = " + v + " is out of range (at most "
          + Integer.MAX_VALUE + ")");
    }
    return v.intValue();
  }

  private static Long longOf(Map<String, String> o, String k) {
    String v = o.get(k);
    if (v == null) {
      return null;
    }
    try {
      return Long.parseLong(v.trim());
    } catch (NumberFormatException e) {
      throw new InvalidOptionException("Refresh option " + k + " must be a whole number, got '"
          + v + "'");
    }
  }

  private static Integer intOf(Map<String, String> o, String k) {
    Long v = longOf(o, k);
    if (v != null && (v > Integer.MAX_VALUE || v < Integer.MIN_VALUE)) {
      throw new InvalidOptionException("Refresh option " + k + " is too large: " + v);
    }
    return v == null ? null : v.intValue();
  }

  private static boolean boolOf(Map<String, String> o, String k) {
    String v = o.get(k);
    if (v == null) {
      return false;
    }
    String t = v.trim().toLowerCase(Locale.ROOT);
    if (!Set.of("true", "false").contains(t)) {
      throw new InvalidOptionException("Refresh option " + k + " must be true or false, got '"
          + v + "'");
    }
    return t.equals("true");
  }

  private static void positive(String name, Integer v) {
    if (v != null && v < 1) {
      throw new InvalidOptionException("Refresh option " + name + " must be at least 1, got " + v);
    }
  }

  private static void nonNegative(String name, Long v) {
    if (v != null && v < 0) {
      throw new InvalidOptionException("Refresh option " + name + " must be >= 0, got " + v);
    }
  }
}
