package io.lancerest.spark.mv.sql;

import io.lancerest.spark.computed.BackfillResult;
import io.lancerest.spark.computed.ComputedColumnException;
import io.lancerest.spark.computed.ComputedColumnSpec;
import io.lancerest.spark.computed.spark.ComputedColumns;
import io.lancerest.spark.mv.sql.SqlTokenizer.Token;
import io.lancerest.spark.mv.sql.SqlTokenizer.Type;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.parser.ParseException;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * The computed-column statements: {@code ALTER TABLE t ADD COLUMN c [type] COMPUTED BY 'class'
 * (inputs) [OPTIONS (...)] [WITH (auto_backfill = true)]} and {@code ALTER TABLE t BACKFILL
 * COLUMN c [WHERE condition] [WITH (...)]}. Every other ALTER TABLE ... ADD COLUMN is Spark's.
 */
final class ComputedColumnSql {
  static final StructType BACKFILL_OUTPUT = new StructType()
      .add("fragments_computed", DataTypes.LongType, false)
      .add("fragments_already_done", DataTypes.LongType, false)
      .add("rows_computed", DataTypes.LongType, false)
      .add("rows_skipped", DataTypes.LongType, false)
      .add("rows_left_for_later", DataTypes.LongType, false)
      .add("read_version", DataTypes.LongType, false)
      .add("committed_version", DataTypes.LongType, false);

  private ComputedColumnSql() {}

  /** ALTER TABLE name ... ADD COLUMN ... COMPUTED BY, or ALTER TABLE name BACKFILL COLUMN. */
  static boolean handles(List<Token> t) {
    if (t.size() < 6 || !t.get(0).isWord("ALTER") || !t.get(1).isWord("TABLE")) {
      return false;
    }
    int i = 3;
    while (i + 1 < t.size() && t.get(i).isSymbol('.')) {
      i += 2;
    }
    if (i + 1 >= t.size()) {
      return false;
    }
    if (t.get(i).isWord("BACKFILL") && t.get(i + 1).isWord("COLUMN")) {
      return true;
    }
    if (!t.get(i).isWord("ADD") || !t.get(i + 1).isWord("COLUMN")) {
      return false;
    }
    for (int k = i + 2; k + 1 < t.size(); k++) {
      if (t.get(k).isWord("COMPUTED") && t.get(k + 1).isWord("BY")) {
        return true;
      }
    }
    return false;
  }

  /** Parses the statement {@link #handles} claimed. */
  static MvStatement parse(MvStatementParser p) throws ParseException {
    p.expectWord("ALTER");
    p.expectWord("TABLE");
    List<String> table = p.identifier("a table name");
    if (p.acceptWord("BACKFILL")) {
      p.expectWord("COLUMN");
      String column = oneName(p, "a column name");
      String where = null;
      if (p.acceptWord("WHERE")) {
        Token first = p.peek();
        int depth = 0;
        Token last = null;
        while (p.peek().type() != Type.EOF && !p.peek().isSymbol(';')
            && !(depth == 0 && p.peek().isWord("WITH"))) {
          Token t = p.next();
          depth += t.isSymbol('(') ? 1 : t.isSymbol(')') ? -1 : 0;
          last = t;
        }
        if (last == null) {
          throw p.error("Expected a condition after WHERE", first);
        }
        where = p.sql.substring(first.start(), last.end());
      }
      Map<String, String> with = p.acceptWord("WITH") ? p.propertyList("WITH") : Map.of();
      return new MvStatement.BackfillColumn(table, column, where, with);
    }
    p.expectWord("ADD");
    p.expectWord("COLUMN");
    String column = oneName(p, "a column name");
    String type = null;
    if (!p.peek().isWord("COMPUTED")) {
      Token first = p.peek();
      Token last = first;
      while (p.peek().type() != Type.EOF && !p.peek().isWord("COMPUTED")) {
        last = p.next();
      }
      type = p.sql.substring(first.start(), last.end());
    }
    p.expectWord("COMPUTED");
    p.expectWord("BY");
    Token cls = p.next();
    if (cls.type() != Type.STRING) {
      throw p.error("Expected the function's class name as a 'string' after COMPUTED BY, found "
          + cls.display(), cls);
    }
    p.expectSymbol('(');
    List<String> inputs = new ArrayList<>();
    if (!p.peek().isSymbol(')')) {
      do {
        inputs.add(oneName(p, "an input column"));
      } while (p.acceptSymbol(','));
    }
    p.expectSymbol(')');
    Map<String, String> options = p.acceptWord("OPTIONS") ? p.propertyList("OPTIONS") : Map.of();
    Map<String, String> with = p.acceptWord("WITH") ? p.propertyList("WITH") : Map.of();
    return new MvStatement.AddComputedColumn(table, column, type, cls.text(), inputs, options,
        with);
  }

  private static String oneName(MvStatementParser p, String what) throws ParseException {
    Token at = p.peek();
    List<String> n = p.identifier(what);
    if (n.size() != 1) {
      throw p.error("Expected " + what + " of one part, found " + String.join(".", n), at);
    }
    return n.get(0);
  }

  static List<Row> add(SparkSession spark, MvStatement.AddComputedColumn s) {
    Map<String, String> with = lower(s.with());
    boolean auto = false;
    for (Map.Entry<String, String> e : with.entrySet()) {
      if (!e.getKey().equals("auto_backfill")
          || !e.getValue().matches("(?i)true|false")) {
        throw new ComputedColumnException("Computed column '" + s.column() + "' of table "
            + String.join(".", s.table()) + ": WITH takes auto_backfill = true or false, not '"
            + e.getKey() + "' = '" + e.getValue() + "'. Put the function's settings in "
            + "OPTIONS (...).");
      }
      auto = Boolean.parseBoolean(e.getValue());
    }
    DataType type = null;
    if (s.type() != null) {
      try {
        type = spark.sessionState().sqlParser().parseDataType(s.type());
      } catch (Exception e) { // ParseException
        throw new ComputedColumnException("Computed column '" + s.column() + "' of table "
            + String.join(".", s.table()) + ": '" + s.type() + "' is not a type: "
            + e.getMessage(), e);
      }
    }
    ComputedColumns.add(spark, s.table(), new ComputedColumnSpec(s.column(), s.className(), type,
        s.inputs(), s.options(), auto));
    return List.of();
  }

  static List<Row> backfill(SparkSession spark, MvStatement.BackfillColumn s) {
    Map<String, String> options = new LinkedHashMap<>(s.options());
    if (s.where() != null) {
      if (lower(options).containsKey("where")) {
        throw new ComputedColumnException("Backfill of column '" + s.column() + "' of table "
            + String.join(".", s.table()) + ": give the condition once, in WHERE or in WITH.");
      }
      options.put("where", s.where());
    }
    BackfillResult r = ComputedColumns.backfill(spark, s.table(), s.column(), options);
    return List.of(RowFactory.create(r.fragmentsComputed(), r.fragmentsAlreadyDone(),
        r.rowsComputed(), r.rowsSkipped(), r.rowsLeftForLater(), r.readVersion(),
        r.committedVersion()));
  }

  private static Map<String, String> lower(Map<String, String> m) {
    Map<String, String> out = new LinkedHashMap<>();
    m.forEach((k, v) -> out.put(k.toLowerCase(Locale.ROOT), v));
    return out;
  }
}
