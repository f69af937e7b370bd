package io.lancerest.spark.mv.engine;

import io.lancerest.spark.mv.error.InvalidOptionException;
import java.util.Locale;

/**
 * Catalog option {@code mv.mode}: who keeps and refreshes the views.
 * <ul>
 *   <li>{@code server}: the server's CreateMaterializedView / RefreshMaterializedView;</li>
 *   <li>{@code client}: the view is a table created through the catalog, its definition stored
 *       on it (Geneva layout), refreshed by this engine in the current Spark session;</li>
 *   <li>{@code auto} (default): server when it implements the endpoints, else client.</li>
 * </ul>
 */
public enum MvMode {
  AUTO, SERVER, CLIENT;

  public static MvMode parse(String value, String catalog) {
    if (value == null || value.isBlank()) {
      return AUTO;
    }
    return switch (value.trim().toLowerCase(Locale.ROOT)) {
      case "auto" -> AUTO;
      case "server" -> SERVER;
      case "client" -> CLIENT;
      default -> throw new InvalidOptionException("spark.sql.catalog." + catalog
          + ".mv.mode is '" + value + "'; use auto, server or client");
    };
  }

  public String wire() {
    return name().toLowerCase(Locale.ROOT);
  }
}
