package io.lancerest.spark.mv.server;

import io.lancerest.client.arrow.ArrowBatches;
import io.lancerest.client.LanceJson;
import io.lancerest.client.arrow.ArrowIpc;
import io.lancerest.client.arrow.JsonArrowSchemas;
import io.lancerest.client.model.CreateMaterializedViewRequest;
import io.lancerest.client.model.JsonArrowSchema;
import io.lancerest.client.model.MaterializedViewUdtfEntry;
import io.lancerest.spark.mv.CreateViewRequest;
import io.lancerest.spark.mv.definition.FunctionSpec;
import io.lancerest.spark.mv.definition.MaterializedViewKind;
import io.lancerest.spark.mv.definition.SourceQuery;
import io.lancerest.spark.mv.query.SourceQuerySql;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * The spec's CreateMaterializedViewRequest as the engine's {@link CreateViewRequest}: the same
 * fields a SQL {@code CREATE MATERIALIZED VIEW} gives, so a view created through the service
 * is the view the catalog would have created. Everything the spec requires of the request is
 * checked here, before anything is created. {@code output_schema}, which the spec requires, may
 * be left out: the engine derives the view's columns from {@code source_query} in any case.
 */
final class CreateRequests {
  private CreateRequests() {}

  /** The engine's request, and what the service does around it. */
  record Mapped(CreateViewRequest request, List<String> sourceTableId, boolean withData,
      boolean autoRefresh) {}

  /**
   * @param catalog the service's catalog: the source query becomes a SELECT over it, analyzed
   *     like the SELECT of a SQL CREATE (one table, no subquery, deterministic expressions), so a
   *     caller's expression cannot read anything but the source it was allowed to see
   */
  static Mapped map(List<String> viewId, CreateMaterializedViewRequest r, String catalog) {
    if (viewId.size() < 2) {
      throw ServiceError.badRequest("View id " + viewId + " needs a namespace and a name");
    }
    if (r.getId() != null && !r.getId().isEmpty() && !r.getId().equals(viewId)) {
      throw ServiceError.badRequest("The body's id " + r.getId() + " is not the view of the path "
          + viewId);
    }
    if (r.getKind() == null) {
      throw ServiceError.badRequest("kind is required: query, udtf or chunker");
    }
    if (r.getSourceQuery() == null || r.getSourceQuery().isBlank()) {
      throw ServiceError.badRequest("source_query is required");
    }
    try {
      MaterializedViewKind kind = MaterializedViewKind.fromWire(r.getKind().getValue());
      SourceQuery query = SourceQuery.fromJson(r.getSourceQuery());
      // The view's columns are derived from source_query (and the function) at CREATE, as for
      // SQL; a given output_schema is read, and a UDTF view's checked against its function.
      Schema declared = r.getOutputSchema() == null || r.getOutputSchema().isBlank() ? null
          : schema(r.getOutputSchema());
      MaterializedViewUdtfEntry e = r.getUdtfSpec();
      Map<String, String> options = new LinkedHashMap<>();
      if (Boolean.TRUE.equals(r.getAutoRefresh())) {
        options.put("auto_refresh", "true");
      }
      String functionClass = null;
      String partitionBy = null;
      String partitionByIndexed = null;
      if (kind == MaterializedViewKind.QUERY) {
        if (e != null) {
          throw ServiceError.badRequest("udtf_spec must be null for a query view");
        }
      } else {
        FunctionSpec spec = FunctionSpec.fromWire(kind, e);
        if (e.getPartitionBy() != null && e.getPartitionByIndexedColumn() != null) {
          throw ServiceError.badRequest("udtf_spec has both partition_by and "
              + "partition_by_indexed_column; they are mutually exclusive");
        }
        if (kind == MaterializedViewKind.CHUNKER && (e.getPartitionBy() != null
            || e.getPartitionByIndexedColumn() != null)) {
          throw ServiceError.badRequest("partition_by and partition_by_indexed_column are for "
              + "udtf views; a chunker runs once per source row");
        }
        if (kind == MaterializedViewKind.UDTF && declared != null) {
          checkOutput(declared, spec.envelope().outputSchema());
        }
        functionClass = spec.envelope().className();
        partitionBy = e.getPartitionBy();
        partitionByIndexed = e.getPartitionByIndexedColumn();
        wireOptions(e, spec, options);
      }
      boolean withData = Boolean.FALSE.equals(r.getWithNoData());
      CreateViewRequest req = new CreateViewRequest(viewId, false, kind,
          SourceQuerySql.select(query, catalog, query.sourceTableId()),
          null, functionClass, partitionBy, partitionByIndexed, options, Map.of(), false);
      return new Mapped(req, query.sourceTableId(), withData,
          Boolean.TRUE.equals(r.getAutoRefresh()));
    } catch (ServiceError se) {
      throw se;
    } catch (RuntimeException ex) {
      throw ServiceError.of(ex);
    }
  }

  /** The udtf_spec fields as the CREATE options that carry them (SQL's OPTIONS names). */
  private static void wireOptions(MaterializedViewUdtfEntry e, FunctionSpec spec,
      Map<String, String> o) {
    o.put("udtf", e.getUdtf());
    o.put("udtf_sha", e.getUdtfSha());
    o.put("udtf_name", e.getUdtfName());
    o.put("udtf_version", e.getUdtfVersion());
    if (spec.envelope().inputColumns() != null) {
      o.put("input_columns", String.join(",", spec.envelope().inputColumns()));
    }
    if (e.getBatch() != null) {
      o.put("batch", e.getBatch().toString());
    }
    if (e.getNumCpus() != null) {
      o.put("num_cpus", e.getNumCpus().toString());
    }
    if (e.getNumGpus() != null) {
      o.put("num_gpus", e.getNumGpus().toString());
    }
    if (e.getMemory() != null) {
      o.put("memory", e.getMemory().toString());
    }
    if (e.getErrorHandling() != null) {
      o.put("error_handling", spec.errorHandling().toJson());
    }
    if (e.getManifest() != null) {
      o.put("manifest", e.getManifest());
    }
    if (e.getManifestChecksum() != null) {
      o.put("manifest_checksum", e.getManifestChecksum());
    }
  }

  /**
   * The request's schema: base64 of an Arrow IPC stream (the spec's form), or, readable, the
   * spec's {@code JsonArrowSchema} (the table routes' {@code schema}) as a JSON string.
   */
  static Schema schema(String base64) {
    if (base64.strip().startsWith("{")) {
      try {
        return JsonArrowSchemas.toArrow(LanceJson.mapper().readValue(base64,
            JsonArrowSchema.class));
      } catch (Exception e) {
        throw ServiceError.badRequest("output_schema starts with '{' but is not a JsonArrowSchema "
            + "({\"fields\": [{\"name\": …, \"type\": {\"type\": \"int64\"}, \"nullable\": …}]}): "
            + e.getMessage());
      }
    }
    byte[] bytes;
    try {
      bytes = Base64.getDecoder().decode(base64.trim());
    } catch (IllegalArgumentException e) {
      throw ServiceError.badRequest("output_schema is not base64: " + e.getMessage());
    }
    try (BufferAllocator a = new RootAllocator();
        ArrowBatches b = ArrowIpc.read(bytes, a)) {
      return b.schema();
    } catch (Exception e) {
      throw ServiceError.badRequest("output_schema is not an Arrow IPC stream with a schema: "
          + e.getMessage());
    }
  }

  /** A UDTF view's rows are the function's: the declared columns must be its output's. */
  private static void checkOutput(Schema declared, Schema function) {
    List<String> want = function.getFields().stream().map(Field::getName).toList();
    List<String> got = declared.getFields().stream().map(Field::getName).toList();
    if (!got.equals(want)) {
      throw ServiceError.badRequest("output_schema has columns " + got + " but the UDTF's "
          + "envelope declares " + want + "; they must be the same");
    }
  }
}
