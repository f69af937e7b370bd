package io.lancerest.client.model;

import java.util.List;
import java.util.Map;

public record DropNamespaceResponse(
    Map<String, String> properties, List<String> transactionId, Map<String, String> context) {}
