package io.lancerest.spark.catalog;

import org.apache.spark.sql.connector.expressions.NamedReference;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.write.DeltaWriteBuilder;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.SupportsDelta;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import org.lance.spark.read.LanceScanBuilder;

/**
 * lance-spark's DELETE / UPDATE / MERGE operation, whose scan (the rows the condition selects)
 * goes through {@link CompleteCountScanBuilder} like every other read of a catalog table: a
 * condition lance-spark cannot write as a Lance filter is evaluated by Spark. Without it, {@code
 * DELETE ... WHERE name = 'x\' OR \'a\'=\'a'} reached Lance as a filter true for every row and
 * deleted them all.
 */
final class FaithfulDeltaOperation implements SupportsDelta {
  private final SupportsDelta lance;

  FaithfulDeltaOperation(SupportsDelta lance) {
    this.lance = lance;
  }

  @Override
  public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
    return new CompleteCountScanBuilder((LanceScanBuilder) lance.newScanBuilder(options));
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
