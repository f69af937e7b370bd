package io.lancerest.client.model;

import java.util.List;
import java.util.Map;

/**
 * The spec's {@code AddVirtualColumnEntry}. Required: {@code inputColumns}, {@code outputs},
 * {@code image}, {@code udf}, {@code udfName}, {@code udfVersion}.
 */
public record AddVirtualColumnEntry(
    List<String> inputColumns,
    List<AddVirtualColumnOutputEntry> outputs,
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
