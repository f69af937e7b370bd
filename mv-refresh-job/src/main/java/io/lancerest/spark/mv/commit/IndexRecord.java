package io.lancerest.spark.mv.commit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lancerest.client.LanceJson;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.lance.Dataset;
import org.lance.index.Index;
import org.lance.index.IndexType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The record of the index segments Overwrite {@code version} carried ({@link IndexCarry#KEY} in
 * its schema metadata), in the form it is stored in: {@code {"version": v, "indexes": [...]}}.
 */
record IndexRecord(long version, List<Index> indexes) {
  // The commit's own log category: these lines are part of the commit's story.
  private static final Logger LOG = LoggerFactory.getLogger(ViewCommit.class);

  /** The record in {@code ds}'s schema metadata, or {@code null} when absent or unreadable. */
  static IndexRecord in(Dataset ds) {
    Map<String, String> meta = ds.getSchema().getCustomMetadata();
    return parse(meta == null ? null : meta.get(IndexCarry.KEY));
  }

  String json() {
    ObjectNode n = LanceJson.mapper().createObjectNode();
    n.put("version", version);
    ArrayNode a = n.putArray("indexes");
    for (Index i : indexes) {
      ObjectNode o = a.addObject();
      o.put("name", i.name());
      o.put("uuid", i.uuid().toString());
      ArrayNode fields = o.putArray("fields");
      i.fields().forEach(fields::add);
      o.put("dataset_version", i.datasetVersion());
      i.fragments().ifPresent(fs -> {
        ArrayNode f = o.putArray("fragments");
        fs.forEach(f::add);
      });
      i.indexDetails().ifPresent(d -> o.put("details", Base64.getEncoder().encodeToString(d)));
      o.put("index_version", i.indexVersion());
      if (i.indexType() != null) {
        o.put("type", i.indexType().name());
      }
      i.createdAt().ifPresent(t -> o.put("created_at_ms", t.toEpochMilli()));
      i.baseId().ifPresent(b -> o.put("base_id", b));
    }
    return n.toString();
  }

  /** The record, or {@code null} when absent or unreadable (then nothing is owed). */
  static IndexRecord parse(String json) {
    if (json == null) {
      return null;
    }
    try {
      JsonNode n = LanceJson.mapper().readTree(json);
      List<Index> out = new ArrayList<>();
      for (JsonNode o : n.path("indexes")) {
        Index.Builder b = Index.builder()
            .name(o.path("name").asText())
            .uuid(UUID.fromString(o.path("uuid").asText()))
            .fields(ints(o.path("fields")))
            .datasetVersion(o.path("dataset_version").asLong())
            .indexVersion(o.path("index_version").asInt());
        if (o.has("type")) {
          b.indexType(IndexType.valueOf(o.path("type").asText()));
        }
        if (o.has("fragments")) {
          b.fragments(ints(o.path("fragments")));
        }
        if (o.has("details")) {
          b.indexDetails(Base64.getDecoder().decode(o.path("details").asText()));
        }
        if (o.has("created_at_ms")) {
          b.createdAt(java.time.Instant.ofEpochMilli(o.path("created_at_ms").asLong()));
        }
        if (o.has("base_id")) {
          b.baseId(o.path("base_id").asInt());
        }
        out.add(b.build());
      }
      return new IndexRecord(n.path("version").asLong(), out);
    } catch (Exception e) {
      LOG.warn("Unreadable record of carried indexes ({}): ignored", e.getMessage());
      return null;
    }
  }

  private static List<Integer> ints(JsonNode a) {
    List<Integer> out = new ArrayList<>();
    a.forEach(x -> out.add(x.asInt()));
    return out;
  }
}
