package io.lancerest.client.model;

import java.util.List;

/**
 * The spec's {@code MaterializedViewUdtfEntry}. Required: {@code kind}, {@code udtf}, {@code
 * udtfSha}, {@code udtfName}, {@code udtfVersion}.
 */
public record MaterializedViewUdtfEntry(
    String kind,
    String udtf,
    String udtfSha,
    String udtfName,
    String udtfVersion,
    List<String> inputColumns,
    String partitionBy,
    String partitionByIndexedColumn,
    Double numCpus,
    Double numGpus,
    Long memory,
    Object errorHandling,
    Boolean batch,
    String manifest,
    String manifestChecksum) {
}
