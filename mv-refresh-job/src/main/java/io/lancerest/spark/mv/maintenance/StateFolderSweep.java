package io.lancerest.spark.mv.maintenance;

import io.lancerest.spark.connector.LanceLocation;
import io.lancerest.spark.mv.fragments.DeletionVectors;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import org.lance.Dataset;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Removes the folders of a view's side state files that no version the view keeps names: a
 * kind's refresh state too large for the config lives in a folder under the view's root that
 * the config names (a chunker view's parent sets, {@value #CHUNKER_STATE}), and lance-core's
 * cleanup never looks there.
 *
 * <p>Why a sweep: the commit that writes a folder removes it when it does not land, and the
 * one that replaces it two refreshes later releases it; but a crash between the write and the
 * commit, a removal that failed, or a restore of an older version (the undone version's folder
 * is then named by no later version and released by none) leaves folders behind. A folder
 * goes once it is older than a grace (a refresh in progress writes its folder just before its
 * commit) and no version the view still keeps names it, so restoring a kept version keeps its
 * state.
 *
 * <p>Only a view on a local file system is swept: lance-core offers no listing of an object
 * store, where only the commits remove folders.
 */
public final class StateFolderSweep {
  private static final Logger LOG = LoggerFactory.getLogger(StateFolderSweep.class);
  /** Where chunker views keep their parent sets: {@code <this>/<random>/parents.lance}. */
  public static final String CHUNKER_STATE = "_mv/chunker_state";
  /** Every folder of side state folders, relative to the view's root. */
  static final List<String> DIRS = List.of(CHUNKER_STATE);

  private StateFolderSweep() {}

  /**
   * Removes the state folders of the view at {@code view} that are older than {@code grace}
   * and named by the config of none of its versions; {@code latest} is the view at its latest
   * version, after the cleanup of old versions. Returns how many went.
   */
  static int sweep(LanceLocation view, Dataset latest, Duration grace) {
    Path root = DeletionVectors.localRoot(view.uri());
    if (root == null) {
      return 0;
    }
    long before = System.currentTimeMillis() - grace.toMillis();
    List<String> candidates = new ArrayList<>();
    for (String dir : DIRS) {
      Path folder = root.resolve(dir);
      if (!Files.isDirectory(folder)) {
        continue;
      }
      try (var folders = Files.list(folder)) {
        for (Path p : folders.toList()) {
          if (Files.getLastModifiedTime(p).toMillis() <= before) {
            candidates.add(dir + "/" + p.getFileName());
          }
        }
      } catch (IOException e) {
        LOG.warn("View table {}: state folders under {} not swept: {}",
            LanceLocation.withoutUserInfo(view.uri()), dir, e.toString());
        return 0;
      }
    }
    candidates.removeIf(c -> names(latest.getConfig(), c));
    if (candidates.isEmpty()) {
      return 0;
    }
    // Rare (something was left behind): every kept version's config is read.
    for (org.lance.Version v : latest.listVersions()) {
      if (v.getId() == latest.version()) {
        continue;
      }
      try (Dataset at = latest.checkoutVersion(v.getId())) {
        Map<String, String> config = at.getConfig();
        candidates.removeIf(c -> names(config, c));
      } catch (Exception e) { // a version cleaned up meanwhile: sweep another time
        LOG.debug("View table {}: version {} not read, state folders not swept: {}",
            LanceLocation.withoutUserInfo(view.uri()), v.getId(), e.toString());
        return 0;
      }
      if (candidates.isEmpty()) {
        return 0;
      }
    }
    int removed = 0;
    for (String c : candidates) {
      try (var files = Files.walk(root.resolve(c))) {
        for (Path x : files.sorted(Comparator.reverseOrder()).toList()) {
          Files.deleteIfExists(x);
        }
        removed++;
      } catch (IOException e) {
        LOG.warn("View table {}: state folder {} that no version names not removed: {}",
            LanceLocation.withoutUserInfo(view.uri()), c, e.toString());
      }
    }
    return removed;
  }

  /** Whether a config value names the folder {@code folder} (a path relative to the root). */
  private static boolean names(Map<String, String> config, String folder) {
    String prefix = folder + "/";
    return config.values().stream().anyMatch(v -> v != null && v.contains(prefix));
  }
}
