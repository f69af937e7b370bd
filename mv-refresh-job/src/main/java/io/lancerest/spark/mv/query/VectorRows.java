package io.lancerest.spark.mv.query;

import io.lancerest.spark.mv.error.InvalidViewDefinitionException;
import io.lancerest.spark.mv.error.MaterializedViewException;
import io.lancerest.spark.mv.layout.VectorColumns;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.sql.types.StructType;

/**
 * The check a query view's write applies to its vector columns, decided once per refresh from
 * the analysed projection: a column that already is a source vector of the view's size needs
 * none (Lance guarantees every row's length); a source vector of another size refuses the
 * refresh before any row is read; a computed list is checked row by row as it is encoded
 * (length and NULL elements, a plain loop over the row's array: no Spark expression, so the
 * SELECT's expression is evaluated once and code generation is kept).
 */
final class VectorRows implements Serializable {
  private static final long serialVersionUID = 1L;
  private final String viewName;
  private final int[] columns;
  private final String[] names;
  private final int[] sizes;

  private VectorRows(String viewName, int[] columns, String[] names, int[] sizes) {
    this.viewName = viewName;
    this.columns = columns;
    this.names = names;
    this.sizes = sizes;
  }

  /**
   * The check for rows of {@code projected} ({@code __source_row_id} first) written as {@code
   * plain}, the view table's schema; {@code null} when no column needs one.
   *
   * @throws InvalidViewDefinitionException when a view vector is now a source vector of another
   *     size
   */
  static VectorRows plan(StructType projected, Schema plain, String viewName) {
    List<Integer> cols = new ArrayList<>();
    List<Field> fields = plain.getFields();
    for (int i = 0; i < fields.size() && i < projected.fields().length; i++) {
      Integer size = VectorColumns.size(fields.get(i));
      if (size == null) {
        continue;
      }
      Integer has = VectorColumns.size(projected.fields()[i]);
      if (has == null) {
        cols.add(i);
      } else if (!has.equals(size)) {
        throw new InvalidViewDefinitionException("Column '" + fields.get(i).getName()
            + "' of view " + viewName + " is a vector of " + size + " floats, but its source "
            + "column is now a vector of " + has + " floats: the source changed. Re-create the "
            + "view. Nothing was committed; the view is unchanged");
      }
    }
    if (cols.isEmpty()) {
      return null;
    }
    int[] c = cols.stream().mapToInt(Integer::intValue).toArray();
    String[] n = new String[c.length];
    int[] s = new int[c.length];
    for (int k = 0; k < c.length; k++) {
      n[k] = fields.get(c[k]).getName();
      s[k] = VectorColumns.size(fields.get(c[k]));
    }
    return new VectorRows(viewName, c, n, s);
  }

  /** {@code rows}, each checked as it is pulled; {@code check} may be {@code null}. */
  static Iterator<InternalRow> checked(VectorRows check, Iterator<InternalRow> rows) {
    if (check == null) {
      return rows;
    }
    return new Iterator<>() {
      @Override
      public boolean hasNext() {
        return rows.hasNext();
      }

      @Override
      public InternalRow next() {
        InternalRow r = rows.next();
        check.check(r);
        return r;
      }
    };
  }

  /**
   * Fails when a vector of {@code row} has another length or a NULL element; a NULL vector
   * passes (searches skip it).
   */
  void check(InternalRow row) {
    for (int k = 0; k < columns.length; k++) {
      int c = columns[k];
      if (row.isNullAt(c)) {
        continue;
      }
      ArrayData a = row.getArray(c);
      int n = a.numElements();
      if (n != sizes[k]) {
        throw wrong(k, row, "a row gives " + n + " elements");
      }
      for (int j = 0; j < n; j++) {
        if (a.isNullAt(j)) {
          throw wrong(k, row, "a row gives one with a NULL element at position " + j);
        }
      }
    }
  }

  private MaterializedViewException wrong(int k, InternalRow row, String what) {
    return new MaterializedViewException("Column '" + names[k] + "' of view " + viewName
        + " is a vector of " + sizes[k] + " floats, but " + what + " (source row _rowid "
        + row.getLong(0) + "). Make the SELECT give " + sizes[k] + " non-NULL floats (or NULL) "
        + "for every row, or re-create the view with another definition. Nothing was committed; "
        + "the view is unchanged");
  }
}
