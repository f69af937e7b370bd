package io.lancerest.client.model;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.Map;

/**
 * The spec's {@code BranchContents}. Required: {@code parentVersion}, {@code createAt}, {@code
 * manifestSize}.
 */
public record BranchContents(
    @JsonProperty("parentBranch") String parentBranch,
    @JsonProperty("parentVersion") Long parentVersion,
    @JsonProperty("createAt") Long createAt,
    @JsonProperty("manifestSize") Long manifestSize,
    Map<String, String> metadata) {
}
