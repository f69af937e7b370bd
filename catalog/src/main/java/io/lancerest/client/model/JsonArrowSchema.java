package io.lancerest.client.model;

import java.util.List;
import java.util.Map;

/** The spec's JSON form of an Arrow schema. */
public record JsonArrowSchema(List<JsonArrowField> fields, Map<String, String> metadata) {
  /** A field. */
  public record JsonArrowField(
      String name, JsonArrowDataType type, boolean nullable, Map<String, String> metadata) {}

  /** A data type; {@code fields} for nested types, {@code length} for fixed-size ones. */
  public record JsonArrowDataType(String type, List<JsonArrowField> fields, Long length) {}
}
