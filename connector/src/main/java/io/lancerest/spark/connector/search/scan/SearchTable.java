package io.lancerest.spark.connector.search.scan;

import io.lancerest.spark.connector.read.TableFragments;
import io.lancerest.spark.connector.search.RowFetchBound;
import io.lancerest.spark.connector.search.SearchException;
import io.lancerest.spark.connector.search.SearchPlan;
import io.lancerest.spark.connector.search.SearchPlanner;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.read.SupportsPushDownRequiredColumns;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import org.lance.Dataset;
import org.lance.spark.LanceDataset;
import org.lance.spark.LanceSparkReadOptions;

/**
 * The rows of one search of a catalog table: the table's columns and the score column ({@code
 * _distance} or {@code _score}), read at the version the search was planned for.
 */
public final class SearchTable implements SupportsRead {
  private final String function;
  private final String name;
  private final SearchPlan plan;
  private final RowFetchBound bound;
  private final StructType schema;
  private final SearchSource source;

  private SearchTable(String function, String name, SearchPlan plan, RowFetchBound bound,
      StructType schema, SearchSource source) {
    this.function = function;
    this.name = name;
    this.plan = plan;
    this.bound = bound;
    this.schema = schema;
    this.source = source;
  }

  /**
   * Plans a search of {@code table} (named {@code tableName}) with {@code planning} on its
   * current version, opened on the driver as the catalog's scans open it.
   *
   * @param function the SQL function's name, for the plan node
   */
  public static SearchTable of(String function, String tableName, LanceDataset table,
      Function<SearchPlanner, SearchPlan> planning) {
    LanceSparkReadOptions read = table.readOptions();
    SearchPlan plan;
    RowFetchBound bound;
    try (Dataset ds = TableFragments.open(read)) {
      plan = planning.apply(SearchPlanner.of(ds, tableName));
      bound = RowFetchBound.of(ds, tableName);
    }
    LanceSparkReadOptions pinned = read.withVersion(Math.toIntExact(plan.version()));
    List<StructField> fields = new ArrayList<>(Arrays.asList(table.schema().fields()));
    for (StructField f : fields) {
      if (f.name().equalsIgnoreCase(plan.scoreColumn())) {
        throw new SearchException(function + " on " + tableName + ": the table has a column '"
            + f.name() + "', the name of the search's " + plan.scoreColumn() + " column. Rename "
            + "the column, or search a materialized view that selects it under another name.");
      }
    }
    fields.add(DataTypes.createStructField(plan.scoreColumn(), DataTypes.FloatType, true));
    return new SearchTable(function, function + "(" + tableName + ")", plan, bound,
        new StructType(fields.toArray(StructField[]::new)),
        new SearchSource(pinned, copy(table.getInitialStorageOptions()),
            table.getNamespaceImpl(), copy(table.getNamespaceProperties())));
  }

  /** A copy that travels to the task, or {@code null}. */
  private static Map<String, String> copy(Map<String, String> m) {
    return m == null ? null : new java.util.HashMap<>(m);
  }

  /** What the search will use, as EXPLAIN shows it. */
  public SearchPlan plan() {
    return plan;
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public StructType schema() {
    return schema;
  }

  @Override
  public Set<TableCapability> capabilities() {
    return Set.of(TableCapability.BATCH_READ);
  }

  @Override
  public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
    return new SupportsPushDownRequiredColumns() {
      private StructType read = schema;

      @Override
      public void pruneColumns(StructType required) {
        // lance-core returns a struct column whole, and the reader maps a struct's children by
        // position: a pruned struct type (struct<b> of struct<a, b>) would read a's values as b.
        // So each required column keeps its full type; Spark projects the nested field itself.
        List<StructField> whole = new ArrayList<>();
        for (StructField f : required.fields()) {
          whole.add(schema.apply(f.name()));
        }
        read = new StructType(whole.toArray(StructField[]::new));
      }

      @Override
      public org.apache.spark.sql.connector.read.Scan build() {
        // known only now: whether the query reads table columns, the rows lance-core fetches
        bound.check(function, plan, read.fields().length > (read.getFieldIndex(
            plan.scoreColumn()).isDefined() ? 1 : 0));
        return new SearchScan(plan, read, source);
      }
    };
  }
}
