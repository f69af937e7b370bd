package io.lancerest.spark.catalog;

import io.lancerest.spark.connector.read.SafeScanBuilder;
import java.util.function.Supplier;
import org.apache.spark.sql.connector.expressions.NamedReference;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.write.DeltaWriteBuilder;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.SupportsDelta;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * lance-spark's DELETE / UPDATE / MERGE operation, whose scan (the rows the condition selects) is
 * built by {@link SafeScanBuilder} like every other read of a catalog table: lance-core runs it
 * in linear time whatever the state of the fragments, and a condition lance-spark cannot write
 * as a Lance filter is evaluated by Spark. Without that, {@code DELETE ... WHERE name = 'x\' OR
 * \'a\'=\'a'} would reach Lance as a filter true for every row and delete them all.
 */
final class FaithfulDeltaOperation implements SupportsDelta {
  private final SupportsDelta lance;
  private final Supplier<SafeScanBuilder> scan;

  /** @param scan the scan lance-spark's operation would build (its schema and read options) */
  FaithfulDeltaOperation(SupportsDelta lance, Supplier<SafeScanBuilder> scan) {
    this.lance = lance;
    this.scan = scan;
  }

  @Override
  public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
    return scan.get(); // lance-spark's operation ignores the options too
  }

  @Override
  public Command command() {
    return lance.command();
  }

  @Override
  public String description() {
    return lance.description();
  }

  @Override
  public DeltaWriteBuilder newWriteBuilder(LogicalWriteInfo info) {
    return lance.newWriteBuilder(info);
  }

  @Override
  public NamedReference[] rowId() {
    return lance.rowId();
  }

  @Override
  public NamedReference[] requiredMetadataAttributes() {
    return lance.requiredMetadataAttributes();
  }

  @Override
  public boolean representUpdateAsDeleteAndInsert() {
    return lance.representUpdateAsDeleteAndInsert();
  }
}
