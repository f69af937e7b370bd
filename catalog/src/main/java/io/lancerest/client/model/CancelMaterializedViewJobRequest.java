package io.lancerest.client.model;

import java.util.List;

/** The view service's {@code job/cancel} request (an extension of this project). */
public record CancelMaterializedViewJobRequest(List<String> id, String jobId)
    implements LanceRequest {}
