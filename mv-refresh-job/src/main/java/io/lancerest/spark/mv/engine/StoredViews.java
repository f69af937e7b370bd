package io.lancerest.spark.mv.engine;

import io.lancerest.client.error.NotFoundException;
import io.lancerest.spark.mv.engine.CatalogBinding.TableLocation;
import io.lancerest.spark.mv.error.InvalidViewDefinitionException;
import io.lancerest.spark.mv.error.MaterializedViewNotFoundException;
import io.lancerest.spark.mv.indexes.IndexListing;
import io.lancerest.spark.mv.layout.GenevaLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.catalyst.analysis.NoSuchNamespaceException;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Finds the catalog's materialized views and reads their definitions from the Geneva layout. */
final class StoredViews {
  // The engine's log category, which operators already filter on.
  private static final Logger LOG = LoggerFactory.getLogger(EngineViews.class);
  private final CatalogBinding cat;

  StoredViews(CatalogBinding cat) {
    this.cat = cat;
  }

  /** The view resolved for a statement; {@code null} when no such table exists. */
  ResolvedView read(List<String> viewId) {
    Described d = read(viewId, false);
    return d == null ? null : d.view();
  }

  /**
   * A view and the indexes of its table, both read from one open of the table, so of one
   * version.
   */
  record Described(ResolvedView view, IndexListing indexes) {}

  /** {@link #require}, with the indexes of the view's table (DESCRIBE). */
  Described describe(List<String> viewId) {
    Described d = read(viewId, true);
    if (d == null) {
      throw notFound(viewId);
    }
    return d;
  }

  private Described read(List<String> viewId, boolean withIndexes) {
    TableLocation view;
    try {
      view = cat.locate(viewId, "view");
    } catch (MaterializedViewNotFoundException e) {
      return null;
    }
    try (BufferAllocator a = new RootAllocator();
        org.lance.Dataset ds = view.dataset().open(a, null)) {
      GenevaLayout.Metadata md = metadata(ds);
      if (!GenevaLayout.isMaterializedView(md.schema())) {
        throw new InvalidViewDefinitionException("Table " + cat.display(viewId) + " is not a "
            + "materialized view (its schema has no '" + GenevaLayout.VERSION + "' metadata); "
            + "use the TABLE statements for it");
      }
      return new Described(decoded(cat.display(viewId), view, md),
          withIndexes ? IndexListing.read(ds) : null);
    }
  }

  /** The view at {@code view} whose table carries {@code md}, without reading it again. */
  static ResolvedView decoded(String name, TableLocation view, GenevaLayout.Metadata md) {
    GenevaLayout.StoredView sv = GenevaLayout.decode(view.relativeId(), md);
    return new ResolvedView(name, view, sv.definition(), sv.state(),
        md.schema().containsKey(GenevaLayout.FORMAT)
            && !md.schema().containsKey(GenevaLayout.MANAGED_BY));
  }

  /** {@link #read}, for statements on a view that must exist. */
  ResolvedView require(List<String> viewId) {
    ResolvedView stored = read(viewId);
    if (stored == null) {
      throw notFound(viewId);
    }
    return stored;
  }

  MaterializedViewNotFoundException notFound(List<String> viewId) {
    return new MaterializedViewNotFoundException("Materialized view " + cat.display(viewId)
        + " does not exist");
  }

  /** The materialized views among the tables of {@code namespace}. */
  List<List<String>> list(List<String> namespace) {
    Identifier[] tables;
    try {
      tables = cat.catalog().listTables(namespace.toArray(String[]::new));
    } catch (NoSuchNamespaceException e) {
      throw new MaterializedViewNotFoundException("Namespace " + cat.display(namespace)
          + " does not exist", e);
    }
    List<List<String>> out = new ArrayList<>();
    for (Identifier t : tables) {
      List<String> id = new ArrayList<>(Arrays.asList(t.namespace()));
      id.add(t.name());
      try {
        TableLocation loc = cat.locate(id, "table");
        if (GenevaLayout.isMaterializedView(metadata(loc).schema())) {
          out.add(List.copyOf(id));
        }
      } catch (MaterializedViewNotFoundException | NotFoundException gone) {
        // dropped while listing
      } catch (RuntimeException unreadable) {
        LOG.debug("Table {} is not readable as a Lance dataset: {}", id, unreadable.toString());
      }
    }
    return out;
  }

  private static GenevaLayout.Metadata metadata(TableLocation loc) {
    try (BufferAllocator a = new RootAllocator();
        org.lance.Dataset ds = loc.dataset().open(a, null)) {
      return metadata(ds);
    }
  }

  private static GenevaLayout.Metadata metadata(org.lance.Dataset ds) {
    Schema s = ds.getSchema();
    Map<String, Map<String, String>> fields = new LinkedHashMap<>();
    for (Field f : s.getFields()) {
      if (f.getMetadata() != null && !f.getMetadata().isEmpty()) {
        fields.put(f.getName(), f.getMetadata());
      }
    }
    return new GenevaLayout.Metadata(
        s.getCustomMetadata() == null ? Map.of() : s.getCustomMetadata(), fields);
  }
}
