package io.lancerest.spark.mv.driver;

import io.lancerest.spark.mv.fragments.FragmentScopedRead;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.BasePredicate;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.Predicate$;
import org.apache.spark.sql.catalyst.expressions.Unevaluable;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.catalyst.plans.logical.Filter;
import org.apache.spark.sql.catalyst.plans.logical.LocalRelation;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.Project;
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2ScanRelation;
import org.apache.spark.sql.types.StructType;
import scala.collection.JavaConverters;
import scala.collection.Seq;

/**
 * The Spark path's optimized plan, a chain of projections and filters over the lance-spark
 * scan, compiled to run over rows of the scan's columns, or why it cannot run on the driver.
 */
public final class CompiledDefinition {
  /** Lance's metadata columns, which lance-core returns by name as lance-spark asks it to. */
  static final List<String> META = List.of("_rowid", "_rowaddr",
      "_row_last_updated_at_version", "_row_created_at_version");

  /** A filter or a projection, bound to the output of the stage below. */
  public record Stage(BasePredicate filter, UnsafeProjection project) {}

  /** Bottom-up: the first stage takes the scan's rows; the last is a projection. */
  private final List<Stage> stages = new ArrayList<>();
  private Stage[] stageArray;
  /** The scan's output: the columns lance-spark reads, in order. */
  private List<Attribute> input = List.of();
  /** The SQL filter lance-spark gives Lance for the scan, or {@code null}. */
  private String lanceFilter;
  /** Whether the stages evaluate the pushed filters too (they came back from the scan). */
  private boolean lanceFilterAlsoInStages;
  /** The optimizer proved no row passes the filter. */
  private boolean empty;
  private String why;
  /** The definition's output columns, with their analysed metadata (a vector's size). */
  private StructType output;

  /** Why the plan cannot run on the driver, or {@code null} when it can. */
  public String why() {
    return why;
  }

  /** The definition's output columns as the optimized plan gives them. */
  public StructType output() {
    return output;
  }

  /** Whether the optimizer proved that no row passes the definition's filter. */
  public boolean empty() {
    return empty;
  }

  /** The columns the scan reads, with the Spark types lance-spark gives them, in order. */
  public List<Attribute> input() {
    return input;
  }

  /** The SQL filter Lance applies to the scan (as lance-spark hands it), or {@code null}. */
  public String lanceFilter() {
    return lanceFilter;
  }

  /** Whether the stages evaluate the filter handed to Lance as well. */
  public boolean lanceFilterAlsoInStages() {
    return lanceFilterAlsoInStages;
  }

  /**
   * Filters and projects one scanned row: the definition's output row (an {@code UnsafeRow}
   * the next call reuses; copy it to keep it), or {@code null} when a filter drops it. Not
   * thread-safe: the compiled projections hold their output buffers.
   */
  public UnsafeRow apply(InternalRow in) {
    if (stageArray == null) {
      stageArray = stages.toArray(new Stage[0]);
    }
    InternalRow row = in;
    for (Stage st : stageArray) {
      if (st.filter() != null) {
        if (!st.filter().eval(row)) {
          return null;
        }
      } else {
        row = st.project().apply(row);
      }
    }
    // the top stage is a projection (of() checks it)
    return (UnsafeRow) row;
  }

  @SuppressWarnings("unchecked")
  public static CompiledDefinition of(LogicalPlan optimized) {
    CompiledDefinition c = new CompiledDefinition();
    c.output = optimized.schema();
    if (optimized instanceof LocalRelation l && l.data().isEmpty()) {
      c.empty = true;
      return c;
    }
    if (!(optimized instanceof Project)) {
      c.why = "the optimized definition is a " + optimized.nodeName() + ", not a projection";
      return c;
    }
    List<LogicalPlan> chain = new ArrayList<>();
    LogicalPlan p = optimized;
    while (p instanceof Project || p instanceof Filter) {
      chain.add(p);
      p = p.children().head();
    }
    if (!(p instanceof DataSourceV2ScanRelation scan)) {
      c.why = "the optimized definition reads its input through a " + p.nodeName();
      return c;
    }
    FragmentScopedRead.LanceRead lance = FragmentScopedRead.lanceRead(scan.scan());
    if (lance == null) {
      c.why = "the Spark path's plan has no fragment-scoped read";
      return c;
    }
    for (org.apache.spark.sql.sources.Filter f : lance.pushed()) {
      for (String col : f.references()) {
        if (META.contains(col) || col.startsWith("_fragid")) {
          // lance-spark scans each fragment on its own, the driver scans the dataset: a
          // filter on row addresses or ids may not match the same rows in both
          c.why = "lance-spark pushes a filter on metadata column " + col + " (" + f + ")";
          return c;
        }
      }
    }
    c.lanceFilter = lance.where();
    c.lanceFilterAlsoInStages = lance.alsoBySpark();
    c.input = new ArrayList<>(JavaConverters.seqAsJavaList(scan.output()));
    if (c.input.isEmpty()) {
      // lance-spark then asks lance-core for row ids only; the definition always reads some
      c.why = "the lance-spark scan reads no column";
      return c;
    }
    // NULL checks mean the same in Lance and in Spark, and Spark infers IS NOT NULL for
    // most filters: when they are all Lance would get, evaluate them here instead, which
    // spares Lance's filtered scan, slower than the unfiltered one (docs/benchmarks.md).
    Expression nullChecks = nullChecksOnly(lance.pushed(), c.input);
    if (nullChecks != null) {
      c.lanceFilter = null;
      BasePredicate pred = Predicate$.MODULE$.create(nullChecks,
          JavaConverters.asScalaBuffer(c.input).toSeq());
      pred.initialize(0);
      c.stages.add(new Stage(pred, null));
    }
    for (int i = chain.size() - 1; i >= 0; i--) {
      LogicalPlan node = chain.get(i);
      List<Expression> exprs = node instanceof Project project
          ? (List<Expression>) (List<?>) JavaConverters.seqAsJavaList(project.projectList())
          : List.of(((Filter) node).condition());
      for (Expression e : exprs) {
        String bad = unevaluable(e);
        if (bad != null) {
          c.why = "the definition uses " + bad + ", which only a Spark job evaluates";
          return c;
        }
        if (!e.deterministic()) {
          // e.g. rand(), spark_partition_id(): their values depend on the task that runs
          // them. CREATE refuses them; a definition written by another client may still
          // have one.
          c.why = "the definition has a non-deterministic expression (" + e.sql() + ")";
          return c;
        }
      }
      Seq<Attribute> in = node.children().head().output();
      if (node instanceof Filter) {
        BasePredicate pred = Predicate$.MODULE$.create(exprs.get(0), in);
        pred.initialize(0);
        c.stages.add(new Stage(pred, null));
      } else {
        UnsafeProjection proj = UnsafeProjection.create(
            JavaConverters.asScalaBuffer(exprs).toSeq(), in);
        proj.initialize(0);
        c.stages.add(new Stage(null, proj));
      }
    }
    return c;
  }

  /**
   * The pushed filters as one Spark expression over {@code input} when every one is a NULL
   * check of a top-level column; otherwise (or when nothing is pushed) {@code null}.
   */
  private static Expression nullChecksOnly(org.apache.spark.sql.sources.Filter[] pushed,
      List<Attribute> input) {
    Expression all = null;
    for (org.apache.spark.sql.sources.Filter f : pushed) {
      String col;
      boolean isNull;
      if (f instanceof org.apache.spark.sql.sources.IsNotNull n) {
        col = n.attribute();
        isNull = false;
      } else if (f instanceof org.apache.spark.sql.sources.IsNull n) {
        col = n.attribute();
        isNull = true;
      } else {
        return null;
      }
      Attribute a = input.stream().filter(x -> x.name().equals(col)).findFirst().orElse(null);
      if (a == null) {
        return null; // e.g. a nested field "s.a": left to Lance
      }
      Expression check = isNull
          ? new org.apache.spark.sql.catalyst.expressions.IsNull(a)
          : new org.apache.spark.sql.catalyst.expressions.IsNotNull(a);
      all = all == null ? check : new org.apache.spark.sql.catalyst.expressions.And(all, check);
    }
    return all;
  }

  /** The first expression in {@code e} that cannot be evaluated as is (a Python UDF...). */
  private static String unevaluable(Expression e) {
    if (e instanceof Unevaluable && !(e instanceof AttributeReference)) {
      return e.prettyName();
    }
    for (Expression c : JavaConverters.seqAsJavaList(e.children())) {
      String bad = unevaluable(c);
      if (bad != null) {
        return bad;
      }
    }
    return null;
  }
}

