package io.lancerest.spark.mv.engine;

import io.lancerest.spark.connector.LanceLocation;
import io.lancerest.spark.mv.definition.MaterializedViewKind;
import io.lancerest.spark.mv.engine.CatalogBinding.TableLocation;
import io.lancerest.spark.mv.error.MaterializedViewException;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * DROP MATERIALIZED VIEW: the view's table purged with what its refreshes left next to it (the
 * errors table, a failed UDTF refresh's checkpoints).
 */
final class ViewDrop {
  // The engine's log category, which operators already filter on.
  private static final Logger LOG = LoggerFactory.getLogger(EngineViews.class);
  private final CatalogBinding cat;
  private final StoredViews views;

  ViewDrop(CatalogBinding cat, StoredViews views) {
    this.cat = cat;
    this.views = views;
  }

  /** Drops the view; {@code false} when it does not exist and the DROP said IF EXISTS. */
  boolean drop(List<String> viewId, boolean ifExists) {
    String viewName = cat.display(viewId);
    ResolvedView stored = views.read(viewId);
    if (stored == null) {
      if (ifExists) {
        return false;
      }
      throw views.notFound(viewId);
    }
    // The skip records of chunker and UDTF refreshes describe this view only; they go first, so
    // a failure leaves the view in place and DROP can simply be repeated.
    // Checkpoints before the errors tables: a failure then leaves the errors history in place.
    if (stored.definition().kind() == MaterializedViewKind.UDTF) {
      dropUdtfCheckpoints(stored.table(), viewName);
    }
    List<String> errorTables = stored.definition().kind() == MaterializedViewKind.QUERY
        ? List.of() : dropErrorTables(stored.table(), viewName);
    // PURGE: a view's data is derived; leaving it behind unreferenced would only leak storage.
    boolean dropped = cat.catalog().purgeTable(CatalogBinding.ident(viewId));
    LOG.info("Dropped materialized view {} and its data{}", viewName,
        errorTables.isEmpty() ? "" : ", and its errors table " + errorTables);
    return dropped;
  }

  /**
   * Drops the {@code <view>__errors} table(s) next to the view's data, where chunker and UDTF
   * refreshes record skipped work items. They are written by path, not registered in the
   * catalog, so nothing else would ever remove them. Returns the locations dropped.
   */
  static List<String> dropErrorTables(TableLocation view, String viewName) {
    List<String> dropped = new ArrayList<>();
    for (String uri : errorTableLocations(view.location())) {
      LanceLocation errors = view.dataset().sibling(uri);
      ErrorsTableState state = errorsTableAt(errors);
      if (state == ErrorsTableState.ABSENT) {
        continue;
      }
      if (state == ErrorsTableState.FOREIGN) {
        // Something else lives at that path (e.g. a user table that happens to be named
        // <view>__errors on a server that lays tables out by name). Never delete data we did
        // not write: leave it and say so.
        LOG.warn("Materialized view {}: '{}' is not an errors table written by this engine "
            + "(its columns differ), so DROP leaves it alone", viewName, uri);
        continue;
      }
      try {
        org.lance.Dataset.drop(uri, errors.current());
      } catch (RuntimeException e) {
        throw new MaterializedViewException("Cannot drop materialized view " + viewName
            + ": its errors table at '" + uri + "' could not be removed (" + e.getMessage()
            + "). The view was left in place; fix the cause and drop it again", e);
      }
      dropped.add(uri);
    }
    return dropped;
  }

  /**
   * Drops the resume checkpoints a failed UDTF refresh left inside the view's location: not
   * every server removes a table's whole directory on purge.
   */
  static void dropUdtfCheckpoints(TableLocation view, String viewName) {
    try {
      io.lancerest.spark.mv.udtf.PartitionCheckpoints.drop(view.dataset());
    } catch (RuntimeException e) {
      throw new MaterializedViewException("Cannot drop materialized view " + viewName + ": "
          + e.getMessage() + ". The view was left in place; fix the cause and drop it again", e);
    }
  }

  /** Where chunker and UDTF refreshes put their errors table. */
  static List<String> errorTableLocations(String viewLocation) {
    return List.of(io.lancerest.spark.mv.layout.ErrorsTable.nextTo(viewLocation));
  }

  private enum ErrorsTableState { ABSENT, ERRORS_TABLE, FOREIGN }

  private static ErrorsTableState errorsTableAt(LanceLocation errors) {
    try (BufferAllocator a = new RootAllocator();
        org.lance.Dataset ds = errors.open(a, null)) {
      return io.lancerest.spark.mv.layout.ErrorsTable.hasErrorsTableColumns(ds)
          ? ErrorsTableState.ERRORS_TABLE : ErrorsTableState.FOREIGN;
    } catch (RuntimeException e) {
      // Absent is the normal case (no refresh skipped anything). Anything else (e.g. access
      // denied) counts as present, so that the drop itself reports it.
      String m = String.valueOf(e.getMessage()).toLowerCase(java.util.Locale.ROOT);
      return m.contains("not found") || m.contains("does not exist")
          || m.contains("no such file") ? ErrorsTableState.ABSENT : ErrorsTableState.ERRORS_TABLE;
    }
  }
}
