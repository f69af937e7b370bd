package io.lancerest.spark.mv.sql;

import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.FunctionIdentifier;
import org.apache.spark.sql.catalyst.TableIdentifier;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.parser.ParseException;
import org.apache.spark.sql.catalyst.parser.ParserInterface;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;
import scala.collection.Seq;

/**
 * The session parser injected by {@code LanceRestSparkExtensions}: materialized-view statements
 * become {@link MaterializedViewCommand}s, everything else goes to the next parser unchanged, so
 * it composes with other extensions (lance-spark's included) in any order.
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
    if (MvStatementParser.handles(sqlText)) {
      return MaterializedViewCommand.of(parseStatement(sqlText));
    }
    return delegate.parsePlan(sqlText);
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
