package io.lancerest.spark.mv.query;

import io.lancerest.spark.connector.LanceLocation;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.CatalystTypeConverters;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.LanceArrowUtils;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.lance.FragmentMetadata;
import org.lance.file.LanceFileReader;
import org.lance.fragment.DataFile;
import org.lance.schema.LanceField;
import org.lance.util.Range;
import org.roaringbitmap.RoaringBitmap;

/**
 * Rows of a fragment read by their physical offsets straight from its data file, whatever its
 * deletion file says: the old values of rows a DELETE or an UPDATE removed, which only their
 * place still finds. Reads only those rows' pages, where a scan of the fragment reads all of
 * them (scattered updates touch every fragment, so a scan reads the whole table).
 *
 * <p>Columns are found in the file by their field ids in the dataset's schema, not by name (a
 * renamed column keeps its id; its name in an older file is the old one). A fragment whose
 * columns are not all in one data file, that lives under another base path, or whose file has a
 * dropped column's placeholder is not read here ({@code null}); nor is a column whose type
 * reads differently than through lance-spark.
 */
final class PlacedRows {
  private PlacedRows() {}

  /**
   * The rows at {@code offsets} of fragment {@code f} of the dataset at {@code location}, with
   * {@code columns} (top-level columns of {@code schema}), or {@code null} when they cannot be
   * read by place.
   */
  static List<Row> read(BufferAllocator a, LanceLocation location, List<LanceField> schema,
      FragmentMetadata f, RoaringBitmap offsets, StructType columns) throws Exception {
    Map<String, Integer> ids = new HashMap<>();
    for (LanceField field : schema) {
      if (field.getParentId() < 0) {
        ids.put(field.getName(), field.getId());
      }
    }
    // every field's parent, children included: a data file lists its columns' child fields too
    Map<Integer, Integer> topLevel = new HashMap<>();
    parents(schema, topLevel);
    DataFile file = null;
    int[] positions = new int[columns.size()];
    int fileColumns = 0;
    for (DataFile d : f.getFiles()) {
      if (d.getBaseId().isPresent()) {
        return null;
      }
      int[] fields = d.getFields();
      int[] pos = new int[columns.size()];
      int found = 0;
      for (int c = 0; c < columns.size(); c++) {
        Integer id = ids.get(columns.fields()[c].name());
        if (id == null) {
          return null;
        }
        int top = 0;
        pos[c] = -1;
        for (int field : fields) {
          if (field == -2) {
            return null; // a dropped column's placeholder: positions would not line up
          }
          Integer parent = topLevel.get(field);
          if (parent == null) {
            return null;
          }
          if (parent >= 0) {
            continue;
          }
          if (field == id) {
            pos[c] = top;
            break;
          }
          top++;
        }
        found += pos[c] >= 0 ? 1 : 0;
      }
      if (found == columns.size()) {
        file = d;
        positions = pos;
        for (int field : fields) {
          fileColumns += topLevel.get(field) < 0 ? 1 : 0;
        }
        break;
      }
      if (found > 0) {
        return null; // split over data files
      }
    }
    if (file == null) {
      return null;
    }
    String root = location.uri().endsWith("/") ? location.uri() : location.uri() + "/";
    try (LanceFileReader r = LanceFileReader.open(root + "data/" + file.getPath(),
        location.current(), a)) {
      if (r.numRows() != f.getPhysicalRows()) {
        return null;
      }
      List<Field> inFile = r.schema().getFields();
      if (inFile.size() != fileColumns) {
        return null; // the file's columns are not the ones its fragment lists: do not guess
      }
      List<String> names = new ArrayList<>();
      for (int p : positions) {
        if (p >= inFile.size()) {
          return null;
        }
        names.add(inFile.get(p).getName());
      }
      return rows(r, names, ranges(offsets), columns);
    }
  }

  private static void parents(List<LanceField> fields, Map<Integer, Integer> out) {
    for (LanceField f : fields) {
      out.put(f.getId(), f.getParentId());
      parents(f.getChildren(), out);
    }
  }

  /** Consecutive offsets as one range each. */
  private static List<Range> ranges(RoaringBitmap offsets) {
    List<Range> out = new ArrayList<>();
    int start = -1;
    int end = -1;
    for (int o : offsets) {
      if (o == end) {
        end++;
        continue;
      }
      if (start >= 0) {
        out.add(Range.of(start, end));
      }
      start = o;
      end = o + 1;
    }
    if (start >= 0) {
      out.add(Range.of(start, end));
    }
    return out;
  }

  private static List<Row> rows(LanceFileReader r, List<String> names, List<Range> ranges,
      StructType columns) throws Exception {
    scala.Function1<Object, Object> toRow =
        CatalystTypeConverters.createToScalaConverter(columns);
    List<Row> out = new ArrayList<>();
    try (ArrowReader reader = r.readAll(names, ranges, 8192)) {
      while (reader.loadNextBatch()) {
        VectorSchemaRoot root = reader.getVectorSchemaRoot();
        ColumnVector[] vectors = new ColumnVector[names.size()];
        for (int i = 0; i < vectors.length; i++) {
          FieldVector v = root.getVector(names.get(i));
          DataType got = v == null ? null : LanceArrowUtils.fromArrowField(v.getField());
          if (got == null || !got.equals(columns.fields()[i].dataType())) {
            return null;
          }
          vectors[i] = new org.lance.spark.vectorized.LanceArrowColumnVector(v);
        }
        ColumnarBatch batch = new ColumnarBatch(vectors, root.getRowCount());
        for (int row = 0; row < root.getRowCount(); row++) {
          out.add((Row) toRow.apply(batch.getRow(row).copy()));
        }
      }
    }
    return out;
  }
}
