package io.lancerest.spark.mv.engine;

import io.lancerest.spark.mv.engine.CatalogBinding.TableLocation;
import io.lancerest.spark.mv.error.VersionManagedTableException;
import io.lancerest.spark.mv.error.VersionManagedTableException.Role;
import java.util.List;

/**
 * The tables a client-managed view touches, and why none of them may be one whose versions the
 * namespace server manages (DescribeTable's {@code managed_versioning}). Such a table gets new
 * versions only through the server's table-version operations, and the server decides which
 * version is current. The engine works on Lance tables in storage itself: it commits views
 * (refresh, compaction, cleanup) and appends to the job log, and reads the source's latest
 * version from storage. So a statement that would touch such a table is refused before it
 * writes anything.
 */
enum ManagedVersions {
  SOURCE("its source table %s has its versions managed by the namespace server "
      + "(managed_versioning=true), which decides which version of it is current; the view "
      + "engine reads the source's versions from storage, not from the server, so it could "
      + "refresh from a version the server never made current.", ManagedVersions.KEEP_VIEW,
      Role.SOURCE),
  VIEW("the view's table %s has its versions managed by the namespace server "
      + "(managed_versioning=true), so every new version of it must go through the server's "
      + "table-version operations; the view engine commits to the view table in storage itself "
      + "(refresh, compaction, cleanup), which would change it behind the server's back.",
      ManagedVersions.KEEP_VIEW, Role.VIEW),
  JOB_LOG("the job log %s has its versions managed by the namespace server "
      + "(managed_versioning=true); the engine appends each refresh's job to it in storage "
      + "itself, which would change it behind the server's back.", "Point the job log at a "
      + "namespace whose server does not manage table versions (" + JobsTable.NAMESPACE_CONF
      + "), or turn it off (" + JobService.ENABLED_CONF + " = false).", Role.JOB_LOG);

  private static final String KEEP_VIEW = "Keep the view and its source in a namespace whose "
      + "server does not manage table versions, or have the view kept by a server that "
      + "implements the materialized-view routes (CreateMaterializedView, "
      + "RefreshMaterializedView; catalog option mv.mode = auto or server).";

  private final String why;
  private final String remedy;
  private final Role role;

  ManagedVersions(String why, String remedy, Role role) {
    this.why = why;
    this.remedy = remedy;
    this.role = role;
  }

  /**
   * Refuses {@code table} when its server manages its versions.
   *
   * @param table as DescribeTable found it, or {@code null} (not there: nothing to refuse)
   * @param lead what is refused, first words of the message ("REFRESH MATERIALIZED VIEW
   *     lance.ns.v is refused")
   * @param outcome what was left undone ("Nothing was refreshed."), or {@code null}
   * @throws VersionManagedTableException when it does
   */
  void refuse(TableLocation table, CatalogBinding cat, String lead, String outcome) {
    if (table != null) {
      refuse(table.managedVersioning(), table.relativeId(), cat, lead, outcome);
    }
  }

  /**
   * Refuses the table {@code relativeId} of catalog {@code cat} when {@code managed} (its
   * DescribeTable's {@code managed_versioning}, read earlier by the same statement).
   */
  void refuse(boolean managed, List<String> relativeId, CatalogBinding cat, String lead,
      String outcome) {
    if (managed) {
      throw new VersionManagedTableException(lead + ": " + String.format(why,
          cat.display(relativeId)) + " " + remedy + (outcome == null ? "" : " " + outcome),
          role, cat.serverId(relativeId));
    }
  }
}
