package io.lancerest.spark.mv.sql;

import org.apache.spark.QueryContext;
import org.apache.spark.sql.AnalysisException;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.FunctionIdentifier;
import org.apache.spark.sql.catalyst.TableIdentifier;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.parser.ParseException;
import org.apache.spark.sql.catalyst.parser.ParserInterface;
import org.apache.spark.sql.catalyst.parser.extensions.LanceSparkSqlExtensionsParser;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.execution.SparkSqlParser;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;
import scala.Option;
import scala.collection.Seq;

/**
 * The session parser injected by {@code LanceRestSparkExtensions}: materialized-view statements
 * (and CREATE INDEX with a vector method) become {@link MaterializedViewCommand}s, everything
 * else goes to the next parser unchanged, so it composes with other extensions (lance-spark's
 * included) in any order.
 *
 * <p>One thing is not passed on unchanged: lance-spark 0.4.0's parser answers a statement that
 * neither Spark's grammar nor its own takes (a syntax error, such as {@code SET TBLPROPERTIES
 * ('k' = v)}) with no plan at all instead of Spark's syntax error, and Spark then fails in
 * analysis with {@code INTERNAL_ERROR} ("plan is null"). It catches the {@link ParseException}
 * of the parsers it wraps to try its own grammar, so:
 * <ul>
 *   <li>when lance-spark's parser is below this one (listed before ours), a missing plan becomes
 *       Spark's own syntax error again;
 *   <li>when it is above (listed after ours, the documented order), a syntax error that its
 *       grammar does not take either leaves this parser as an {@link AnalysisException} (what
 *       {@code ParseException} extends, with the same message and error class), which it does
 *       not catch. Its own statements still reach it as the {@code ParseException} it expects.
 * </ul>
 */
public final class MaterializedViewSqlParser implements ParserInterface {
  private final SparkSession session;
  private final ParserInterface delegate;

  public MaterializedViewSqlParser(SparkSession session, ParserInterface delegate) {
    this.session = session;
    this.delegate = delegate;
  }

  /** Parses a materialized-view statement without building a plan (for tests and tools). */
  public MvStatement parseStatement(String sql) throws ParseException {
    return MvStatementParser.parse(delegate, sql);
  }

  @Override
  public LogicalPlan parsePlan(String sqlText) throws ParseException {
    LogicalPlan plan;
    try {
      plan = MvStatementParser.handles(sqlText)
          ? MaterializedViewCommand.of(parseStatement(sqlText))
          : delegate.parsePlan(sqlText);
    } catch (ParseException e) {
      throw MaterializedViewSqlParser.<ParseException>sneaky(unclaimed(sqlText, e));
    }
    if (plan == null) {
      // A parser below (lance-spark's) took nothing: Spark's grammar says why.
      new SparkSqlParser().parsePlan(sqlText);
      throw MaterializedViewSqlParser.<ParseException>sneaky(analysisError("No SQL parser of "
          + "this session took the statement: " + sqlText, null));
    }
    return plan;
  }

  /**
   * {@code e} as it should leave this parser: unchanged, unless lance-spark's parser wraps this
   * one and would turn it into a missing plan (its grammar does not take the statement either).
   */
  private Exception unclaimed(String sqlText, ParseException e) {
    if (!(session.sessionState().sqlParser() instanceof LanceSparkSqlExtensionsParser)) {
      return e;
    }
    try {
      // Its public entry: our delegate refuses the text again, then its own grammar is tried.
      if (new LanceSparkSqlExtensionsParser(delegate).parsePlan(sqlText) != null) {
        return e; // one of its statements: it parses it on receiving e
      }
    } catch (Exception ownError) {
      return e; // its grammar took the statement and reports on it itself
    }
    return analysisError(e.getMessage(), e);
  }

  /** An AnalysisException that is not a ParseException, so no wrapping parser catches it. */
  private static AnalysisException analysisError(String message, ParseException cause) {
    return new AnalysisException(message, Option.empty(), Option.empty(), Option.apply(cause),
        Option.apply(cause == null ? null : cause.getErrorClass()),
        cause == null ? scala.collection.immutable.Map$.MODULE$.<String, String>empty()
            : cause.messageParameters(),
        cause == null ? new QueryContext[0] : cause.getQueryContext());
  }

  /**
   * Throws a checked exception that {@code parsePlan}'s (or a command's {@code run}) Java
   * signature does not declare. Its callers are Scala (Spark, other parsers), which has no
   * checked exceptions, and Spark's own parsers and commands throw AnalysisException too.
   */
  @SuppressWarnings("unchecked")
  static <T extends Throwable> T sneaky(Throwable t) throws T {
    throw (T) t;
  }

  @Override
  public Expression parseExpression(String sqlText) throws ParseException {
    return delegate.parseExpression(sqlText);
  }

  @Override
  public TableIdentifier parseTableIdentifier(String sqlText) throws ParseException {
    return delegate.parseTableIdentifier(sqlText);
  }

  @Override
  public FunctionIdentifier parseFunctionIdentifier(String sqlText) throws ParseException {
    return delegate.parseFunctionIdentifier(sqlText);
  }

  @Override
  public Seq<String> parseMultipartIdentifier(String sqlText) throws ParseException {
    return delegate.parseMultipartIdentifier(sqlText);
  }

  @Override
  public LogicalPlan parseQuery(String sqlText) throws ParseException {
    return delegate.parseQuery(sqlText);
  }

  @Override
  public StructType parseTableSchema(String sqlText) throws ParseException {
    return delegate.parseTableSchema(sqlText);
  }

  @Override
  public DataType parseDataType(String sqlText) throws ParseException {
    return delegate.parseDataType(sqlText);
  }

  SparkSession session() {
    return session;
  }
}
