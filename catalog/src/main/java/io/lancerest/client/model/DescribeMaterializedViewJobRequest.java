package io.lancerest.client.model;

import java.util.List;

/** The view service's {@code job/describe} request (an extension of this project). */
public record DescribeMaterializedViewJobRequest(List<String> id, String jobId)
    implements LanceRequest {}
