package io.lancerest.spark.mv.query;

import io.lancerest.spark.mv.definition.SourceQuery;
import io.lancerest.spark.mv.driver.CompiledDefinition;
import io.lancerest.spark.mv.refresh.ViewTables;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.FunctionIdentifier;
import org.apache.spark.sql.catalyst.analysis.ExpressionWithUnresolvedIdentifier;
import org.apache.spark.sql.catalyst.analysis.FunctionRegistry;
import org.apache.spark.sql.catalyst.analysis.UnresolvedFunction;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.parser.ParseException;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.types.StructType;
import scala.Option;
import scala.collection.JavaConverters;

/**
 * The driver path's compiled definitions, kept between refreshes of the same view in the same
 * SparkSession: building, analysing, optimizing and compiling the Spark plan is most of a small
 * refresh, and gives the same result as long as nothing it depends on changed.
 *
 * <p>A compiled definition is reused only when all of these are unchanged: the session, every
 * SQL conf set in it (ANSI mode, time zone, case sensitivity...), the definition, the view's
 * columns, the source table, its columns (with their metadata) and the source's lance-spark
 * read options that change a plan. It is kept only when the plan depends on nothing else:
 * <ul>
 *   <li>no user-defined function ({@link UserDefinedFunctions});</li>
 *   <li>every function the definition calls is Spark's built-in one, checked again on every
 *       reuse: a temporary function registered later under a built-in's name (which Spark then
 *       calls instead) makes the definition compile again.</li>
 * </ul>
 * A definition never calls {@code current_timestamp()}, {@code current_user()} or another
 * function of the clock or the session, whose value the optimizer writes into the plan: CREATE
 * refuses such a SELECT, and so does every refresh of a view stored with one ({@link
 * StoredSelects}), before anything is compiled.
 *
 * <p>An entry is taken out while a refresh uses it (compiled projections hold per-row buffers),
 * so two refreshes never share one.
 */
final class CompiledPlans {
  /** Entries kept; the least recently used goes first. */
  static final int CAPACITY = 16;

  private final Map<Key, Entry> entries = new LinkedHashMap<>(16, 0.75f, true) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<Key, Entry> eldest) {
      return size() > CAPACITY;
    }
  };


  /**
   * The options of a lance-spark read that change its plan (what it pushes down, how it
   * reads); the source's other storage options (credentials, endpoints) do not, and vended
   * credentials change from one refresh to the next, so they are left out of the key.
   */
  private static final java.util.Set<String> PLANNING_OPTIONS = java.util.Set.of(
      "pushdownfilters", "topn_push_down", "nearest", "batch_size", "block_size");

  /**
   * What a compiled definition depends on. Holds the session's SQL confs, which may include
   * secrets (a catalog's token): never printed.
   */
  record Key(String session, scala.collection.immutable.Map<String, String> confs,
      String sourceUri, Map<String, String> readOptions, List<Field> sourceFields,
      String definition, StructType target) {
    @Override
    public String toString() {
      return "CompiledPlans.Key[" + sourceUri + "]";
    }
  }

  /** A compiled definition and the (built-in) functions it calls. */
  record Entry(CompiledDefinition compiled, List<FunctionIdentifier> functions) {}

  static Key key(SparkSession spark, ViewTables t, SourceQuery q, StructType target,
      List<Field> sourceFields) {
    Map<String, String> planning = new java.util.TreeMap<>();
    t.sourceStorageOptions().forEach((k, v) -> {
      if (PLANNING_OPTIONS.contains(k.toLowerCase(java.util.Locale.ROOT))) {
        planning.put(k.toLowerCase(java.util.Locale.ROOT), v);
      }
    });
    return new Key(spark.sessionUUID(), spark.sessionState().conf().getAllConfs(),
        t.sourceUri(), planning, List.copyOf(sourceFields), q.toJson(), target);
  }

  /**
   * The compiled definition for {@code key}, taken out of the cache (hand it back with {@link
   * #giveBack} when done), or {@code null}.
   */
  Entry take(SparkSession spark, Key key) {
    Entry e;
    synchronized (entries) {
      e = entries.remove(key);
    }
    return e != null && builtIns(spark, e.functions) ? e : null;
  }

  /**
   * The entry to keep for {@code c}, compiled from {@code analyzed} (the Spark path's analysed
   * plan of {@code q}), or {@code null} when the plan depends on more than {@link Key} says.
   */
  static Entry entry(SparkSession spark, SourceQuery q, LogicalPlan analyzed,
      CompiledDefinition c) {
    List<FunctionIdentifier> functions;
    try {
      functions = cacheableFunctions(spark, q, analyzed);
    } catch (RuntimeException e) {
      return null; // not kept; the refresh itself is not affected
    }
    return functions == null ? null : new Entry(c, functions);
  }

  /** Keeps {@code e} (from {@link #take} or {@link #entry}) for the next refresh. */
  void giveBack(Key key, Entry e) {
    synchronized (entries) {
      entries.put(key, e);
    }
  }

  /**
   * The functions the definition calls when its plan may be kept (see the class comment),
   * otherwise {@code null}.
   */
  static List<FunctionIdentifier> cacheableFunctions(SparkSession spark, SourceQuery q,
      LogicalPlan analyzed) {
    if (UserDefinedFunctions.calledBy(analyzed)) {
      return null;
    }
    List<String> texts = new ArrayList<>();
    for (SourceQuery.OutputColumn c : q.projection()) {
      texts.add(c.expr());
    }
    if (q.filter() != null) {
      texts.add(q.filter());
    }
    List<FunctionIdentifier> out = new ArrayList<>();
    for (String text : texts) {
      Expression parsed;
      try {
        parsed = spark.sessionState().sqlParser().parseExpression(text);
      } catch (ParseException e) {
        return null;
      }
      if (parsed.exists(x -> x instanceof ExpressionWithUnresolvedIdentifier)) {
        // IDENTIFIER('f')(...): a function named by a string, which the analyser looks up
        // like any other; its name is not known here, so it could not be checked on reuse
        return null;
      }
      List<Expression> found = JavaConverters.seqAsJavaList(parsed.collect(
          new scala.runtime.AbstractPartialFunction<Expression, Expression>() {
            @Override
            public boolean isDefinedAt(Expression x) {
              return x instanceof UnresolvedFunction;
            }

            @Override
            public Expression apply(Expression x) {
              return x;
            }
          }));
      for (Expression f : found) {
        List<String> parts = JavaConverters.seqAsJavaList(((UnresolvedFunction) f).nameParts());
        if (parts.size() != 1) {
          return null; // a qualified (persistent) function
        }
        out.add(new FunctionIdentifier(parts.get(0), Option.empty(), Option.empty()));
      }
    }
    return builtIns(spark, out) ? List.copyOf(out) : null;
  }

  /** Every one of {@code functions} resolves in this session to Spark's built-in function. */
  private static boolean builtIns(SparkSession spark, List<FunctionIdentifier> functions) {
    for (FunctionIdentifier f : functions) {
      Option<?> mine = spark.sessionState().functionRegistry().lookupFunctionBuilder(f);
      Option<?> builtin = FunctionRegistry.builtin().lookupFunctionBuilder(f);
      if (mine.isEmpty() || builtin.isEmpty() || mine.get() != builtin.get()) {
        return false;
      }
    }
    return true;
  }
}
