package io.lancerest.client.model;

import java.util.List;

/** A page of the view service's jobs; {@code pageToken} is null on the last page. */
public record ListMaterializedViewJobsResponse(List<MaterializedViewJob> jobs,
    String pageToken) {}
