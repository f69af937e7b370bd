package io.lancerest.client.model;

import java.util.List;

/** The spec's {@code QueryVector}. Query vector(s) for similarity search. */
public record QueryVector(
    List<Float> singleVector,
    List<List<Float>> multiVector) {
}
