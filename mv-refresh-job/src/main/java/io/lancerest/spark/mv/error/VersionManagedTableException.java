package io.lancerest.spark.mv.error;

import java.util.List;

/**
 * A statement would read or commit a Lance table whose versions its namespace server manages
 * ({@code managed_versioning=true}) past the server, which the engine refuses: the message names
 * the table, why, and what to do instead. Nothing was written when it is thrown. {@link #role}
 * and {@link #tableId} say which table it is, for front ends that word the refusal for their
 * own callers (the view service).
 */
public class VersionManagedTableException extends MaterializedViewException {
  /** Which table of the statement the server versions. */
  public enum Role {
    /** The view's source table. */
    SOURCE,
    /** The view's own table. */
    VIEW,
    /** The catalog's job log, where each refresh records its job. */
    JOB_LOG
  }

  private final Role role;
  private final List<String> tableId;

  /** @param tableId the table's identifier as the namespace server names it */
  public VersionManagedTableException(String message, Role role, List<String> tableId) {
    super(message);
    this.role = role;
    this.tableId = List.copyOf(tableId);
  }

  public Role role() {
    return role;
  }

  /** The table's identifier as the namespace server names it (no catalog name). */
  public List<String> tableId() {
    return tableId;
  }
}
