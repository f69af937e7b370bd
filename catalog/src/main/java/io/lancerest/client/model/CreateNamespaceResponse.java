package io.lancerest.client.model;

import java.util.Map;

public record CreateNamespaceResponse(
    String transactionId, Map<String, String> properties, Map<String, String> context) {}
