package io.lancerest.client.model;

import com.fasterxml.jackson.annotation.JsonProperty;

/** The spec's {@code TagContents}. Required: {@code version}, {@code manifestSize}. */
public record TagContents(
    String branch,
    Long version,
    @JsonProperty("manifestSize") Long manifestSize) {
}
