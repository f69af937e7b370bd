package io.lancerest.spark.mv.sql;

import java.util.List;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.types.DataTypeUtils;
import org.apache.spark.sql.execution.command.LeafRunnableCommand;
import org.apache.spark.sql.types.StructType;
import scala.Enumeration;
import scala.collection.IndexedSeq;
import scala.collection.JavaConverters;
import scala.collection.Seq;

/**
 * A Spark command (a leaf {@code RunnableCommand}) for one materialized-view statement. Spark
 * plans it as {@code ExecutedCommandExec} and runs it eagerly, like its own DDL. The work is done
 * by {@link MaterializedViewStatements}, which calls the {@code MaterializedViews} API.
 *
 * <p>Written in Java: the Scala traits' abstract members (children, output, the nodePatterns
 * val, Product) are implemented here by hand; the output attributes are created once, so their
 * expression ids stay stable across plan copies.
 */
public final class MaterializedViewCommand extends LogicalPlan implements LeafRunnableCommand {
  private final MvStatement statement;
  private final Seq<Attribute> output;
  private Seq<Enumeration.Value> nodePatterns = toSeq(List.of());

  /** Public: Spark's TreeNode.makeCopy finds the constructor by reflection. */
  public MaterializedViewCommand(MvStatement statement) {
    this.statement = statement;
    StructType schema = MaterializedViewStatements.outputSchema(statement);
    this.output = toSeq(JavaConverters.seqAsJavaList(DataTypeUtils.toAttributes(schema)));
  }

  public static MaterializedViewCommand of(MvStatement statement) {
    return new MaterializedViewCommand(statement);
  }

  public MvStatement statement() {
    return statement;
  }

  @Override
  public Seq<Row> run(SparkSession session) {
    List<Row> rows = MaterializedViewStatements.execute(session, statement);
    return JavaConverters.asScalaBuffer(rows).toSeq();
  }

  @Override
  public Seq<Attribute> output() {
    return output;
  }

  @Override
  public Seq<LogicalPlan> children() {
    return toSeq(List.of());
  }

  @Override
  public LogicalPlan withNewChildrenInternal(IndexedSeq<LogicalPlan> newChildren) {
    return this;
  }

  @Override
  public scala.collection.immutable.Map<String,
      org.apache.spark.sql.execution.metric.SQLMetric> metrics() {
    return scala.collection.immutable.Map$.MODULE$.empty();
  }

  @Override
  public Seq<Enumeration.Value> nodePatterns() {
    return nodePatterns;
  }

  @Override
  public void org$apache$spark$sql$catalyst$plans$logical$Command$_setter_$nodePatterns_$eq(
      Seq<Enumeration.Value> value) {
    this.nodePatterns = value;
  }

  @Override
  public org.apache.spark.sql.catalyst.expressions.AttributeSet producedAttributes() {
    return outputSet();
  }

  @Override
  public org.apache.spark.sql.catalyst.plans.logical.Statistics stats() {
    return LeafRunnableCommand.super.stats();
  }

  @Override
  public String simpleString(int maxFields) {
    return "MaterializedViewCommand " + statement;
  }

  // scala.Product: the statement is the only constructor argument.
  @Override
  public int productArity() {
    return 1;
  }

  @Override
  public Object productElement(int n) {
    if (n != 0) {
      throw new IndexOutOfBoundsException(Integer.toString(n));
    }
    return statement;
  }

  @Override
  public boolean canEqual(Object that) {
    return that instanceof MaterializedViewCommand;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof MaterializedViewCommand c && c.statement.equals(statement);
  }

  @Override
  public int hashCode() {
    return statement.hashCode();
  }

  private static <T> Seq<T> toSeq(List<? extends T> list) {
    return JavaConverters.asScalaBuffer(new java.util.ArrayList<T>(list)).toList();
  }
}
