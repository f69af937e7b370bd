package io.lancerest.spark.mv.definition;

import com.fasterxml.jackson.core.JsonProcessingException;
import io.lancerest.client.LanceJson;
import io.lancerest.spark.mv.error.InvalidViewDefinitionException;

/** Reads and writes the definition JSON formats with the project's one mapping (snake_case). */
public final class DefinitionJson {
  private DefinitionJson() {}

  public static String write(Object value) {
    try {
      return LanceJson.mapper().writeValueAsString(value);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("Cannot write " + value.getClass().getSimpleName(), e);
    }
  }

  /** Parses {@code json}; a validation error raised while building the value surfaces as is. */
  public static <T> T read(String json, Class<T> type, String what) {
    try {
      return LanceJson.mapper().readValue(json, type);
    } catch (JsonProcessingException e) {
      for (Throwable t = e.getCause(); t != null; t = t.getCause()) {
        if (t instanceof InvalidViewDefinitionException ive) {
          throw ive;
        }
      }
      throw new InvalidViewDefinitionException(
          what + " is not valid JSON of its format: " + e.getOriginalMessage(), e);
    }
  }
}
