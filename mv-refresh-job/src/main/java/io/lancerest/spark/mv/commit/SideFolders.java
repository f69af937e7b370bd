package io.lancerest.spark.mv.commit;

import io.lancerest.spark.connector.LanceLocation;
import org.lance.Dataset;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The side folders of one commit under the view's root, which lance-core does not manage:
 * {@code written} for the commit (removed when it does not land), {@code released} by it
 * (removed once it does); either may be {@code null}.
 */
record SideFolders(LanceLocation table, String written, String released) {
  // The commit's own log category: these lines are part of the commit's story.
  private static final Logger LOG = LoggerFactory.getLogger(ViewCommit.class);

  void dropWritten() {
    drop(written);
  }

  void dropReleased() {
    drop(released);
  }

  /**
   * Removes a side folder; a failure leaves it behind, logged (the view's maintenance removes
   * it later on a file system it can list).
   */
  private void drop(String folder) {
    if (folder == null) {
      return;
    }
    try {
      Dataset.drop(folder, table.current());
    } catch (Exception e) { // lance-core's IOException arrives undeclared
      LOG.warn("View table '{}': side folder {} not removed ({}); it is left behind",
          LanceLocation.withoutUserInfo(table.uri()), LanceLocation.withoutUserInfo(folder),
          LanceLocation.withoutUserInfo(String.valueOf(e.getMessage())));
    }
  }
}
