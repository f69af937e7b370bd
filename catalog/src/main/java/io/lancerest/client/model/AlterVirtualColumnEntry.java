package io.lancerest.client.model;

import java.util.List;
import java.util.Map;

/** The spec's {@code AlterVirtualColumnEntry}. */
public record AlterVirtualColumnEntry(
    List<String> inputColumns,
    String image,
    String udf,
    String udfName,
    String udfVersion,
    String udfBackend,
    Boolean autoBackfill,
    String manifest,
    String manifestChecksum,
    Map<String, String> fieldMetadata) {
}
