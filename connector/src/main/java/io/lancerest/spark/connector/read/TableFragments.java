package io.lancerest.spark.connector.read;

import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.lance.Dataset;
import org.lance.Fragment;
import org.lance.FragmentMetadata;
import org.lance.spark.LanceRuntime;
import org.lance.spark.LanceSparkReadOptions;

/**
 * The fragments of one version of a dataset and their {@link FragmentHazard}s, read from its
 * manifest (no data file is opened).
 *
 * @param version the dataset version the fragments are of
 * @param hazards each fragment's hazard, by fragment id
 * @param rowIdMeta the row-id sequence ({@code RowIdMeta} JSON) of each fragment with stable row
 *     ids, by fragment id: what a reader needs to map its row addresses to row ids
 */
public record TableFragments(long version, Map<Integer, FragmentHazard> hazards,
    Map<Integer, String> rowIdMeta) {

  public TableFragments {
    hazards = Collections.unmodifiableMap(new HashMap<>(hazards));
    rowIdMeta = Collections.unmodifiableMap(new HashMap<>(rowIdMeta));
  }

  /** The fragments of {@code ds} at its current version. */
  public static TableFragments of(Dataset ds) {
    return of(ds.version(), ds.getFragments().stream().map(Fragment::metadata).toList());
  }

  /** The fragments {@code fragments} of version {@code version}. */
  public static TableFragments of(long version, List<FragmentMetadata> fragments) {
    Map<Integer, FragmentHazard> hazards = new HashMap<>();
    Map<Integer, String> meta = new HashMap<>();
    for (FragmentMetadata f : fragments) {
      FragmentHazard h = FragmentHazard.of(f);
      hazards.put(f.getId(), h);
      if (f.getRowIdMeta() != null) {
        meta.put(f.getId(), f.getRowIdMeta().getMetadata());
      }
    }
    return new TableFragments(version, hazards, meta);
  }

  /**
   * The dataset lance-spark reads with {@code options} (its version, or the latest), opened on
   * the driver the way lance-spark's scan planning opens it.
   */
  public static TableFragments read(LanceSparkReadOptions options) {
    try (Dataset ds = open(options)) {
      return of(ds);
    }
  }

  /**
   * The dataset lance-spark reads with {@code options} (its version, or the latest), opened on
   * the driver the way lance-spark's scan planning opens it; the caller closes it.
   */
  public static Dataset open(LanceSparkReadOptions options) {
    var open = Dataset.open().allocator(LanceRuntime.allocator())
        .readOptions(options.toReadOptions());
    if (options.hasNamespace()) {
      open.namespace(options.getNamespace()).tableId(options.getTableId());
    } else {
      open.uri(options.getDatasetUri());
    }
    return open.build();
  }

  /** The worst hazard of {@code fragmentIds} (of fragments not known here: the worst). */
  public FragmentHazard hazard(Iterable<Integer> fragmentIds) {
    FragmentHazard worst = FragmentHazard.NONE;
    for (Integer id : fragmentIds) {
      worst = worst.and(hazards.getOrDefault(id, FragmentHazard.REWRITTEN_ROW_IDS));
    }
    return worst;
  }

  /** Whether any fragment has {@code hazard}. */
  public boolean any(FragmentHazard hazard) {
    return hazards.containsValue(hazard);
  }

  /** The ids of the fragments with {@code hazard}, in order (for messages). */
  public TreeSet<Integer> with(FragmentHazard hazard) {
    TreeSet<Integer> out = new TreeSet<>();
    hazards.forEach((id, h) -> {
      if (h == hazard) {
        out.add(id);
      }
    });
    return out;
  }
}
