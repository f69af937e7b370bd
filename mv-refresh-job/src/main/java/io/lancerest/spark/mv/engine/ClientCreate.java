package io.lancerest.spark.mv.engine;

import io.lancerest.spark.mv.CreateViewRequest;
import io.lancerest.spark.mv.RefreshListener;
import io.lancerest.spark.mv.RefreshOptions;
import io.lancerest.spark.mv.commit.ViewCommit;
import io.lancerest.spark.mv.definition.MaterializedViewKind;
import io.lancerest.spark.mv.definition.ViewDefinition;
import io.lancerest.spark.mv.definition.ViewState;
import io.lancerest.spark.mv.engine.CatalogBinding.TableLocation;
import io.lancerest.spark.mv.error.MaterializedViewAlreadyExistsException;
import io.lancerest.spark.mv.error.MaterializedViewException;
import io.lancerest.spark.mv.error.MaterializedViewNotFoundException;
import io.lancerest.spark.mv.layout.GenevaLayout;
import io.lancerest.spark.mv.result.RefreshResult;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.analysis.NoSuchNamespaceException;
import org.apache.spark.sql.catalyst.analysis.TableAlreadyExistsException;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.expressions.Transform;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Creates a client-managed view: a catalog table whose schema carries the definition in the
 * Geneva layout, then (WITH DATA) its first refresh, all or nothing.
 */
final class ClientCreate {
  // The engine's log category, which operators already filter on.
  private static final Logger LOG = LoggerFactory.getLogger(EngineViews.class);
  private final SparkSession spark;
  private final CatalogBinding cat;
  private final StoredViews views;
  private final ClientRefresh refresh;

  ClientCreate(SparkSession spark, CatalogBinding cat, StoredViews views, ClientRefresh refresh) {
    this.spark = spark;
    this.cat = cat;
    this.views = views;
    this.refresh = refresh;
  }

  /** Creates the view; the first refresh's result, or {@code null} WITH NO DATA. */
  RefreshResult create(CreateViewRequest r, PreparedView p) {
    ViewDefinition d = p.definition();
    String viewName = cat.display(r.viewId());
    String refused = "CREATE MATERIALIZED VIEW " + viewName + " is refused";
    ManagedVersions.SOURCE.refuse(p.source(), cat, refused, "Nothing was created.");
    if (r.withData()) {
      refresh.requireWritableLog(refused, "Nothing was created.");
    }
    Identifier ident = CatalogBinding.ident(r.viewId());
    Map<String, String> props = new LinkedHashMap<>(p.tableProperties());
    props.put("enable_stable_row_ids", "true");
    try {
      cat.catalog().createTable(ident, p.viewSchema(), new Transform[0], props);
    } catch (TableAlreadyExistsException e) {
      throw new MaterializedViewAlreadyExistsException("Cannot create materialized view "
          + viewName + ": it was created concurrently", e);
    } catch (NoSuchNamespaceException e) {
      throw new MaterializedViewNotFoundException("Cannot create materialized view " + viewName
          + ": its namespace does not exist. Create it first (CREATE NAMESPACE)", e);
    }
    ResolvedView created;
    try {
      TableLocation view = cat.locate(r.viewId(), "view");
      // Only the server that made the table can tell it versions it; dropped below.
      ManagedVersions.VIEW.refuse(view, cat, refused, "The table created for it is "
          + "dropped again, with nothing committed to it.");
      GenevaLayout.Metadata md = GenevaLayout.encode(d, ViewState.NEVER_REFRESHED,
          cat.client().config().uri().toString());
      long version;
      try (BufferAllocator a = new RootAllocator();
          org.lance.Dataset ds = view.dataset().open(a, null)) {
        version = ds.version();
      }
      Map<String, String> schemaMd = new LinkedHashMap<>(md.schema());
      String managedBy = spark.conf().get(EngineViews.MANAGED_BY_CONF, null);
      if (managedBy != null && !managedBy.isBlank()) {
        schemaMd.put(GenevaLayout.MANAGED_BY, managedBy);
      }
      ViewCommit.Builder b = ViewCommit.builder(view.dataset(), version)
          .schemaMetadata(schemaMd)
          .config(describeTableProperties(d));
      md.fields().forEach(b::fieldMetadata);
      b.build().commit();
      // what the view's table now says, as a later statement would read it back
      created = StoredViews.decoded(viewName, view,
          new GenevaLayout.Metadata(schemaMd, md.fields()));
    } catch (RuntimeException e) {
      try {
        cat.catalog().purgeTable(ident);
      } catch (RuntimeException cleanup) {
        e.addSuppressed(cleanup);
      }
      throw e;
    } finally {
      cat.invalidate(r.viewId());
    }
    LOG.info("Created client-managed {} view {}", d.kind().wire(), viewName);
    if (!r.withData()) {
      return null;
    }
    RefreshOptions initial = p.outputLimit() == null ? RefreshOptions.DEFAULTS
        : RefreshOptions.builder().outputLimit(p.outputLimit()).build();
    try {
      // PreparedView.prepare has just checked the function's options against this very source,
      // and described it: the first refresh neither describes the view nor its source again.
      return refresh.refresh(created, initial, false, RefreshListener.NONE, null, p.source());
    } catch (Throwable failure) {
      throw notCreated(r.viewId(), viewName, failure);
    }
  }

  /**
   * CREATE ... WITH DATA is all or nothing: when the first refresh throws, the view it created
   * is dropped again, so that the corrected CREATE does not find it "already exists". A refresh
   * that skipped rows under error_handling returned PARTIAL and never gets here. The spec's
   * {@code with_no_data} only concerns a server's CreateMaterializedView, whose refresh is an
   * asynchronous job; here the refresh runs inside the statement.
   */
  private RuntimeException notCreated(List<String> viewId, String viewName, Throwable failure) {
    // A cancelled refresh leaves this thread interrupted; the drop must still reach the server.
    boolean interrupted = Thread.interrupted();
    boolean dropped = false;
    try {
      ResolvedView stored = views.read(viewId);
      if (stored != null) {
        // not every server removes a table's whole directory on purge
        if (stored.definition().kind() == MaterializedViewKind.UDTF) {
          ViewDrop.dropUdtfCheckpoints(stored.table(), viewName);
        }
        ViewDrop.dropErrorTables(stored.table(), viewName);
        cat.catalog().purgeTable(CatalogBinding.ident(viewId));
      }
      dropped = true;
    } catch (RuntimeException cleanup) {
      failure.addSuppressed(cleanup);
    } finally {
      cat.invalidate(viewId);
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
    LOG.warn("The first refresh of new view {} failed; {}", viewName, dropped
        ? "the view was dropped again" : "dropping the view failed too");
    if (failure instanceof Error err) {
      throw err;
    }
    // The sentence goes first: a Spark job failure's message ends with an executor stack trace.
    return new MaterializedViewException("Materialized view " + viewName + " was not created: "
        + "its first refresh failed, and CREATE MATERIALIZED VIEW ... WITH DATA then removes the "
        + "view" + (dropped
            ? ". Fix the cause and run the CREATE again, or create the view WITH NO DATA and "
                + "refresh it later"
            : ", but removing it failed too (see the suppressed error): drop it with DROP "
                + "MATERIALIZED VIEW " + viewName + " before creating it again")
        + ". The refresh failed with: " + failure.getMessage(), failure);
  }

  private static Map<String, String> describeTableProperties(ViewDefinition d) {
    Map<String, String> m = new LinkedHashMap<>();
    m.put(EngineViews.PROP_KIND, d.kind().wire());
    m.put(EngineViews.PROP_SOURCE, String.join(".", d.sourceQuery().sourceTableId()));
    m.put(EngineViews.PROP_DEFINITION, d.sourceQuery().toJson());
    if (d.function() != null) {
      m.put(EngineViews.PROP_FUNCTION, d.function().envelope().className());
    }
    return m;
  }
}
