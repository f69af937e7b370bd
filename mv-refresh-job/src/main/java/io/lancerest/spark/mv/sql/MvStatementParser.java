package io.lancerest.spark.mv.sql;

import io.lancerest.spark.mv.definition.MaterializedViewKind;
import io.lancerest.spark.mv.sql.SqlTokenizer.Token;
import io.lancerest.spark.mv.sql.SqlTokenizer.Type;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.spark.sql.catalyst.parser.ParseException;
import org.apache.spark.sql.catalyst.parser.ParserInterface;
import scala.collection.JavaConverters;

/**
 * Recursive descent over the statement prefix of the materialized-view statements. Identifiers
 * and the embedded SELECT are handed to Spark's parser (the delegate), so quoting rules and query
 * syntax are exactly Spark's.
 */
final class MvStatementParser {
  final ParserInterface delegate;
  final String sql;
  final List<Token> tokens;
  int pos;

  MvStatementParser(ParserInterface delegate, String sql, List<Token> tokens) {
    this.delegate = delegate;
    this.sql = sql;
    this.tokens = tokens;
  }

  /**
   * True when {@code sql} starts like one of our statements (VERB MATERIALIZED ..., EXPLAIN
   * REFRESH MATERIALIZED ..., the job statements, SHOW INDEXES, or ALTER TABLE ... CREATE INDEX
   * ... USING a vector method or bitmap).
   */
  static boolean handles(String sql) {
    List<Token> t;
    try {
      t = SqlTokenizer.tokenize(sql);
    } catch (MaterializedViewSqlException e) {
      return false; // not ours to report: the delegate gives Spark's usual error
    }
    if (isVectorIndex(t) || ComputedColumnSql.handles(t)) {
      return true;
    }
    if (t.size() >= 4 && t.get(0).isWord("SHOW") && (t.get(1).isWord("INDEXES")
        || t.get(1).isWord("INDEX")) && (t.get(2).isWord("FROM") || t.get(2).isWord("IN"))) {
      return true;
    }
    if (t.size() >= 4 && t.get(0).isWord("EXPLAIN") && t.get(1).isWord("REFRESH")
        && t.get(2).isWord("MATERIALIZED")) {
      return true;
    }
    if (t.size() >= 3 && (t.get(0).isWord("SHOW") && t.get(1).isWord("JOBS")
        || (t.get(0).isWord("DESCRIBE") || t.get(0).isWord("DESC") || t.get(0).isWord("CANCEL"))
            && t.get(1).isWord("JOB") && t.get(2).type() == SqlTokenizer.Type.STRING)) {
      return true;
    }
    if (t.size() < 3 || !t.get(1).isWord("MATERIALIZED")) {
      return false;
    }
    Token verb = t.get(0);
    return verb.isWord("CREATE") || verb.isWord("REFRESH") || verb.isWord("DROP")
        || verb.isWord("SHOW") || verb.isWord("DESCRIBE") || verb.isWord("DESC")
        || verb.isWord("OPTIMIZE");
  }

  /**
   * {@code ALTER TABLE <name> CREATE INDEX <name> USING <method>} with a vector method or
   * bitmap: ours. Every other CREATE INDEX (btree, fts, ...) is lance-spark's, unchanged.
   */
  private static boolean isVectorIndex(List<Token> t) {
    if (t.size() < 8 || !t.get(0).isWord("ALTER") || !t.get(1).isWord("TABLE")) {
      return false;
    }
    int i = 2;
    if (!isName(t.get(i))) {
      return false;
    }
    i++;
    while (t.get(i).isSymbol('.') && isName(t.get(i + 1))) {
      i += 2;
    }
    return i + 4 < t.size() && t.get(i).isWord("CREATE") && t.get(i + 1).isWord("INDEX")
        && isName(t.get(i + 2)) && t.get(i + 3).isWord("USING")
        && t.get(i + 4).type() == Type.WORD
        && VectorIndexes.isOurMethod(t.get(i + 4).text());
  }

  private static boolean isName(Token t) {
    return t.type() == Type.WORD || t.type() == Type.QUOTED_IDENT;
  }

  static MvStatement parse(ParserInterface delegate, String sql) throws ParseException {
    return new MvStatementParser(delegate, sql, SqlTokenizer.tokenize(sql)).statement();
  }

  private MvStatement statement() throws ParseException {
    Token second = tokens.get(Math.min(pos + 1, tokens.size() - 1));
    if (peek().isWord("SHOW") && second.isWord("JOBS") || second.isWord("JOB")
        && (peek().isWord("DESCRIBE") || peek().isWord("DESC") || peek().isWord("CANCEL"))) {
      return end(job(next()));
    }
    if (peek().isWord("ALTER")) {
      return end(ComputedColumnSql.handles(tokens) ? ComputedColumnSql.parse(this) : vectorIndex());
    }
    if (peek().isWord("SHOW") && (second.isWord("INDEXES") || second.isWord("INDEX"))) {
      pos += 3; // SHOW INDEXES FROM|IN (handles() checked them)
      return end(new MvStatement.ShowIndexes(identifier("a table name")));
    }
    Token verb = next();
    boolean explain = verb.isWord("EXPLAIN");
    if (explain) {
      verb = next(); // REFRESH (handles() checked it)
    }
    expectWord("MATERIALIZED");
    MvStatement s;
    if (explain) {
      expectWord("VIEW");
      List<String> name = identifier("a view name");
      Map<String, String> options = Map.of();
      if (acceptWord("WITH")) {
        options = propertyList("WITH");
      }
      s = new MvStatement.ExplainRefresh(name, options);
    } else if (verb.isWord("OPTIMIZE")) {
      expectWord("VIEW");
      s = new MvStatement.Optimize(identifier("a view name"));
    } else if (verb.isWord("CREATE")) {
      expectWord("VIEW");
      s = create();
    } else if (verb.isWord("REFRESH")) {
      expectWord("VIEW");
      List<String> name = identifier("a view name");
      boolean async = acceptWord("ASYNC");
      boolean await = !async && acceptWord("WAIT");
      Map<String, String> options = Map.of();
      if (acceptWord("WITH")) {
        options = propertyList("WITH");
      }
      if (await) {
        options = new java.util.LinkedHashMap<>(options);
        options.put("wait", "true");
      }
      s = new MvStatement.Refresh(name, options, async);
    } else if (verb.isWord("DROP")) {
      expectWord("VIEW");
      boolean ifExists = acceptWord("IF");
      if (ifExists) {
        expectWord("EXISTS");
      }
      s = new MvStatement.Drop(identifier("a view name"), ifExists);
    } else if (verb.isWord("SHOW")) {
      expectWord("VIEWS");
      List<String> ns = null;
      if (acceptWord("IN") || acceptWord("FROM")) {
        ns = identifier("a namespace");
      }
      s = new MvStatement.Show(ns);
    } else {
      expectWord("VIEW");
      s = new MvStatement.Describe(identifier("a view name"));
    }
    return end(s);
  }

  private MvStatement end(MvStatement s) {
    acceptSymbol(';');
    if (peek().type() != Type.EOF) {
      throw error("Unexpected " + peek().display() + " after the end of the statement", peek());
    }
    return s;
  }

  /** SHOW JOBS, DESCRIBE JOB, CANCEL JOB (the verb consumed; handles() checked the next word). */
  private MvStatement job(Token verb) throws ParseException {
    if (verb.isWord("SHOW")) {
      expectWord("JOBS");
      String catalog = null;
      List<String> view = null;
      Integer limit = null;
      while (peek().type() != Type.EOF && !peek().isSymbol(';')) {
        Token t = peek();
        if (acceptWord("IN")) {
          once(catalog == null, t, "IN");
          catalog = catalogName();
        } else if (acceptWord("FOR")) {
          once(view == null, t, "FOR");
          view = identifier("a view name");
        } else if (acceptWord("LIMIT")) {
          once(limit == null, t, "LIMIT");
          Token n = next();
          if (n.type() != Type.NUMBER || !n.text().matches("[0-9]{1,9}")) {
            throw error("Expected the number of jobs after LIMIT (0 or more), found "
                + n.display(), n);
          }
          limit = Integer.parseInt(n.text());
        } else {
          throw error("Expected IN, FOR, LIMIT or the end of SHOW JOBS, found " + t.display(),
              t);
        }
      }
      return new MvStatement.ShowJobs(catalog, view, limit);
    }
    expectWord("JOB");
    Token id = next();
    if (id.type() != Type.STRING || id.text().isBlank()) {
      throw error("Expected the job id as a string literal ('3f2a...'), found "
          + id.display(), id);
    }
    String catalog = null;
    List<String> view = null;
    Token t = peek();
    if (acceptWord("IN")) {
      catalog = catalogName();
    } else if (acceptWord("FOR")) {
      view = identifier("a view name");
    }
    if (peek().isWord("IN") || peek().isWord("FOR")) {
      throw error("Give IN <catalog> or FOR <view>, not both: the view names its catalog", t);
    }
    return verb.isWord("CANCEL") ? new MvStatement.CancelJob(id.text().trim(), catalog, view)
        : new MvStatement.DescribeJob(id.text().trim(), catalog, view);
  }

  /** ALTER TABLE t CREATE INDEX i USING method (column) [WITH (...)] (isVectorIndex checked). */
  private MvStatement vectorIndex() throws ParseException {
    expectWord("ALTER");
    expectWord("TABLE");
    List<String> table = identifier("a table name");
    expectWord("CREATE");
    expectWord("INDEX");
    Token nameToken = peek();
    List<String> name = identifier("an index name");
    if (name.size() != 1) {
      throw error("An index name has one part, not " + String.join(".", name), nameToken);
    }
    expectWord("USING");
    Token m = next();
    String method = m.text().toLowerCase(Locale.ROOT);
    if (!VectorIndexes.METHODS.containsKey(method)) {
      throw error("CREATE INDEX on " + String.join(".", table) + ": unknown index method '"
          + m.text() + "'; use one of " + VectorIndexes.supportedMethods()
          + " (or btree, fts for lance-spark's scalar and full-text indexes)", m);
    }
    String kind = method.equals("bitmap") ? "bitmap" : "vector";
    expectSymbol('(');
    Token columnToken = peek();
    List<String> columns = new java.util.ArrayList<>();
    do {
      List<String> c = identifier("a column name");
      if (c.size() != 1) {
        throw error("A " + kind + " index is built on a top-level column, not "
            + String.join(".", c), columnToken);
      }
      columns.add(c.get(0));
    } while (acceptSymbol(','));
    expectSymbol(')');
    if (columns.size() != 1) {
      throw error("A " + kind + " index is built on one column, not " + columns.size() + " "
          + columns, columnToken);
    }
    Map<String, String> options = acceptWord("WITH") ? propertyList("WITH") : Map.of();
    return new MvStatement.CreateVectorIndex(table, name.get(0), method, columns.get(0),
        options);
  }

  private String catalogName() throws ParseException {
    List<String> parts = identifier("a catalog name");
    if (parts.size() != 1) {
      throw error("IN takes a catalog name, not " + String.join(".", parts),
          tokens.get(pos - 1));
    }
    return parts.get(0);
  }

  private MvStatement.Create create() throws ParseException {
    boolean ifNotExists = false;
    if (acceptWord("IF")) {
      expectWord("NOT");
      expectWord("EXISTS");
      ifNotExists = true;
    }
    List<String> name = identifier("a view name");
    MaterializedViewKind kind = null;
    String cls = null;
    String partitionBy = null;
    String partitionByIndexed = null;
    Map<String, String> options = null;
    Map<String, String> props = null;
    while (!peek().isWord("AS")) {
      Token t = peek();
      if (acceptWord("USING")) {
        once(kind == null, t, "USING");
        Token k = next();
        if (k.isWord("CHUNKER") || k.isWord("SCALAR_UDTF")) {
          kind = MaterializedViewKind.CHUNKER;
        } else if (k.isWord("UDTF")) {
          kind = MaterializedViewKind.UDTF;
        } else {
          throw error("Expected CHUNKER or UDTF after USING, found " + k.display(), k);
        }
        Token c = next();
        if (c.type() != Type.STRING || c.text().isBlank()) {
          throw error("Expected the function class as a string literal ('com.example.MyChunker')"
              + ", found " + c.display(), c);
        }
        cls = c.text().trim();
      } else if (acceptWord("PARTITION")) {
        once(partitionBy == null && partitionByIndexed == null, t, "PARTITION BY");
        expectWord("BY");
        if (acceptWord("INDEXED")) {
          partitionByIndexed = columnName();
        } else {
          partitionBy = columnName();
        }
      } else if (acceptWord("OPTIONS")) {
        once(options == null, t, "OPTIONS");
        options = propertyList("OPTIONS");
      } else if (acceptWord("TBLPROPERTIES")) {
        once(props == null, t, "TBLPROPERTIES");
        props = propertyList("TBLPROPERTIES");
      } else {
        throw error("Expected USING, PARTITION BY, OPTIONS, TBLPROPERTIES or AS, found "
            + t.display(), t);
      }
    }
    Token as = next();
    int queryEnd = tokens.get(tokens.size() - 1).start(); // EOF offset
    int last = tokens.size() - 2; // last real token
    if (last > pos && tokens.get(last).isSymbol(';')) {
      queryEnd = tokens.get(last).start();
      last--;
    }
    boolean withData = true;
    if (last > pos && tokens.get(last).isWord("DATA")) {
      int w = last - 1;
      boolean no = tokens.get(w).isWord("NO");
      if (no) {
        w--;
      }
      if (w >= pos && tokens.get(w).isWord("WITH")) {
        withData = !no;
        queryEnd = tokens.get(w).start();
      }
    }
    if (peek().start() >= queryEnd) {
      throw error("Expected a SELECT after AS", peek().type() == Type.EOF ? peek() : as);
    }
    String query = sql.substring(peek().start(), queryEnd).trim();
    delegate.parseQuery(query); // Spark's own syntax check and error message
    pos = tokens.size() - 1;
    return new MvStatement.Create(name, ifNotExists, kind, cls, partitionBy, partitionByIndexed,
        options == null ? Map.of() : options, props == null ? Map.of() : props, query, withData);
  }

  private void once(boolean first, Token t, String clause) {
    if (!first) {
      throw error(clause + " is given twice", t);
    }
  }

  /** A multipart identifier, parsed by Spark from the span of its tokens. */
  List<String> identifier(String what) throws ParseException {
    Token first = peek();
    if (first.type() != Type.WORD && first.type() != Type.QUOTED_IDENT) {
      throw error("Expected " + what + ", found " + first.display(), first);
    }
    next();
    Token lastPart = first;
    while (peek().isSymbol('.')) {
      next();
      Token part = next();
      if (part.type() != Type.WORD && part.type() != Type.QUOTED_IDENT) {
        throw error("Expected a name part after '.', found " + part.display(), part);
      }
      lastPart = part;
    }
    String text = sql.substring(first.start(), lastPart.end());
    return JavaConverters.seqAsJavaList(delegate.parseMultipartIdentifier(text));
  }

  private String columnName() throws ParseException {
    List<String> parts = identifier("a column name");
    if (parts.size() != 1) {
      throw error("PARTITION BY takes one top-level column of the source, not "
          + String.join(".", parts), tokens.get(pos - 1));
    }
    return parts.get(0);
  }

  /** {@code ( key [=] value, ... )}; keys are case-preserved, duplicate keys are an error. */
  Map<String, String> propertyList(String clause) {
    expectSymbol('(');
    Map<String, String> out = new LinkedHashMap<>();
    if (acceptSymbol(')')) {
      return out;
    }
    do {
      Token keyToken = peek();
      String key = propertyKey();
      acceptSymbol('=');
      String value = propertyValue(key);
      if (out.putIfAbsent(key, value) != null) {
        throw error(clause + " sets '" + key + "' twice", keyToken);
      }
    } while (acceptSymbol(','));
    expectSymbol(')');
    return out;
  }

  private String propertyKey() {
    Token t = next();
    if (t.type() == Type.STRING) {
      return t.text();
    }
    if (t.type() != Type.WORD && t.type() != Type.QUOTED_IDENT) {
      throw error("Expected an option name, found " + t.display(), t);
    }
    StringBuilder key = new StringBuilder(t.text());
    while (peek().isSymbol('.')) {
      next();
      Token p = next();
      if (p.type() != Type.WORD && p.type() != Type.QUOTED_IDENT) {
        throw error("Expected an option name part after '.', found " + p.display(), p);
      }
      key.append('.').append(p.text());
    }
    return key.toString();
  }

  private String propertyValue(String key) {
    Token t = next();
    switch (t.type()) {
      case STRING:
      case NUMBER:
        return t.text();
      case SYMBOL:
        if (t.isSymbol('-') && peek().type() == Type.NUMBER) {
          return "-" + next().text();
        }
        break;
      case WORD:
        String w = t.text().toLowerCase(Locale.ROOT);
        if (w.equals("true") || w.equals("false") || w.equals("null")) {
          return w;
        }
        break;
      default:
        break;
    }
    throw error("Expected a value for '" + key + "' (a 'string', a number, true or false), "
        + "found " + t.display(), t);
  }

  Token peek() {
    return tokens.get(pos);
  }

  Token next() {
    Token t = tokens.get(pos);
    if (t.type() != Type.EOF) {
      pos++;
    }
    return t;
  }

  boolean acceptWord(String w) {
    if (peek().isWord(w)) {
      pos++;
      return true;
    }
    return false;
  }

  boolean acceptSymbol(char c) {
    if (peek().isSymbol(c)) {
      pos++;
      return true;
    }
    return false;
  }

  void expectWord(String w) {
    if (!acceptWord(w)) {
      throw error("Expected " + w + ", found " + peek().display(), peek());
    }
  }

  void expectSymbol(char c) {
    if (!acceptSymbol(c)) {
      throw error("Expected '" + c + "', found " + peek().display(), peek());
    }
  }

  MaterializedViewSqlException error(String problem, Token at) {
    return new MaterializedViewSqlException(problem, sql, at.start());
  }
}
