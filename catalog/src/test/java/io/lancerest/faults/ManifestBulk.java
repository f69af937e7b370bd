package io.lancerest.faults;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.types.pojo.Schema;
import org.lance.Dataset;
import org.lance.Fragment;
import org.lance.FragmentMetadata;
import org.lance.FragmentOperation;
import org.lance.ReadOptions;
import org.lance.WriteParams;
import org.lance.spark.LanceRuntime;

/**
 * Declares many tables on the directory server at once, for the load tests. The server keeps
 * its catalog in a Lance table, {@code <root>/__manifest} (object_id, object_type, location,
 * metadata, base_objects), and a DeclareTable costs about three commits to it (70–180 ms here),
 * so 2,000 declarations through the API take minutes. Appending the same rows in one commit
 * takes well under a second and gives exactly what DeclareTable leaves behind: a row of type
 * {@code table} whose location is a directory below the root that holds no dataset yet. The
 * load test checks the result through the server's own ListTables and DescribeTable.
 */
final class ManifestBulk {
  private ManifestBulk() {}

  /** Appends one declared-table row per id (namespace parts plus table name) in one commit. */
  static void declareTables(Path root, List<List<String>> ids, String delimiter) {
    String manifest = root.resolve("__manifest").toString();
    BufferAllocator alloc = LanceRuntime.allocator();
    Schema schema;
    long version;
    try (Dataset ds = Dataset.open(alloc, manifest, new ReadOptions.Builder().build())) {
      schema = ds.getSchema();
      version = ds.version();
    }
    try (VectorSchemaRoot rows = VectorSchemaRoot.create(schema, alloc)) {
      VarCharVector objectId = (VarCharVector) rows.getVector("object_id");
      VarCharVector objectType = (VarCharVector) rows.getVector("object_type");
      VarCharVector location = (VarCharVector) rows.getVector("location");
      VarCharVector metadata = (VarCharVector) rows.getVector("metadata");
      ListVector bases = (ListVector) rows.getVector("base_objects");
      rows.allocateNew();
      for (int i = 0; i < ids.size(); i++) {
        String id = String.join(delimiter, ids.get(i));
        String dir = String.format("%08x", ThreadLocalRandom.current().nextInt()) + "_" + id;
        objectId.setSafe(i, id.getBytes(StandardCharsets.UTF_8));
        objectType.setSafe(i, "table".getBytes(StandardCharsets.UTF_8));
        location.setSafe(i, dir.getBytes(StandardCharsets.UTF_8));
        metadata.setNull(i);
        bases.setNull(i);
      }
      rows.setRowCount(ids.size());
      List<FragmentMetadata> fragments =
          Fragment.create(manifest, alloc, rows, new WriteParams.Builder().build());
      Dataset.commit(alloc, manifest, new FragmentOperation.Append(fragments),
          Optional.of(version)).close();
    }
  }
}
