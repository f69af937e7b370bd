package io.lancerest.spark.connector.search.scan;

import io.lancerest.spark.connector.search.SearchPlan;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.connector.read.Batch;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * One search as one input partition: top k is global, so it runs once over the whole table, not
 * per fragment. Its description (the plan node in EXPLAIN) says what the search uses.
 */
final class SearchScan implements Scan, Batch {
  private final SearchPlan plan;
  private final StructType read;
  private final SearchSource source;

  SearchScan(SearchPlan plan, StructType read, SearchSource source) {
    this.plan = plan;
    this.read = read;
    this.source = source;
  }

  /** The search's one task: the plan, the columns it returns and where its dataset is. */
  record Partition(SearchPlan plan, StructType read, SearchSource source)
      implements InputPartition, Serializable {
    /** The table columns lance-core reads (the score column comes with the search). */
    List<String> columns() {
      List<String> out = new ArrayList<>();
      for (StructField f : read.fields()) {
        if (!f.name().equals(plan.scoreColumn())) {
          out.add(f.name());
        }
      }
      return out;
    }
  }

  @Override
  public StructType readSchema() {
    return read;
  }

  @Override
  public String description() {
    return plan.explain() + ", version " + plan.version();
  }

  @Override
  public Batch toBatch() {
    return this;
  }

  @Override
  public InputPartition[] planInputPartitions() {
    return new InputPartition[] {new Partition(plan, read, source)};
  }

  @Override
  public PartitionReaderFactory createReaderFactory() {
    return new SearchReaderFactory();
  }
}
