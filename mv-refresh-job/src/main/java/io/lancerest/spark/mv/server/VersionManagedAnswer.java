package io.lancerest.spark.mv.server;

import io.lancerest.client.error.ErrorCode;
import io.lancerest.spark.mv.engine.JobService;
import io.lancerest.spark.mv.error.VersionManagedTableException;
import java.util.List;

/**
 * The service's answer to a CREATE or REFRESH the engine refuses because the upstream manages
 * the versions of a table it would touch ({@link VersionManagedTableException}): a 409 (code 19,
 * invalid table state; not 406, which clients take for a service without the route) worded for
 * the caller, with the view and tables as the caller names them (no catalog of the service) and
 * what the caller can do. Any other failure is answered by {@link ServiceError#of}.
 */
final class VersionManagedAnswer {
  private VersionManagedAnswer() {}

  /**
   * @param statement {@code CREATE MATERIALIZED VIEW} or {@code REFRESH MATERIALIZED VIEW}
   * @param viewId the view of the request
   * @param outcome what was left undone ("Nothing was created.")
   */
  static ServiceError of(RuntimeException e, String statement, List<String> viewId,
      String outcome) {
    for (Throwable c = e; c != null; c = c.getCause()) {
      if (c instanceof VersionManagedTableException v) {
        return new ServiceError(409, ErrorCode.INVALID_TABLE_STATE, statement + " "
            + name(viewId) + " is refused: " + reason(v) + " " + outcome, 0, e);
      }
    }
    return ServiceError.of(e);
  }

  private static String reason(VersionManagedTableException v) {
    String table = name(v.tableId());
    String managed = " has its versions managed by the upstream namespace server "
        + "(managed_versioning=true), ";
    String remedy = "The upstream manages this table's versions; keep the view and its source "
        + "in a namespace whose tables it does not manage.";
    return switch (v.role()) {
      case SOURCE -> "its source table " + table + managed + "which decides which version of "
          + "it is current; this service reads the source's versions from storage, not from "
          + "the upstream. " + remedy;
      case VIEW -> "the view's table " + table + managed + "so every new version of it must go "
          + "through the upstream's table-version operations; this service commits the view "
          + "in storage itself. " + remedy;
      case JOB_LOG -> "the service's job log " + table + managed + "and the service appends "
          + "each refresh's job to it in storage itself. The service's operator must point "
          + "its job log at a namespace whose tables the upstream does not manage ("
          + JobService.NAMESPACE_CONF + ").";
    };
  }

  private static String name(List<String> id) {
    return String.join(".", id);
  }
}
