package io.lancerest.client.model;

import java.util.List;

/** The view service's {@code job/list} request (an extension): paged like the spec's lists. */
public record ListMaterializedViewJobsRequest(List<String> id, String pageToken, Integer limit)
    implements LanceRequest {}
