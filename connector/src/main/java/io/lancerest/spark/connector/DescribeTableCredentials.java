package io.lancerest.spark.connector;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.lance.io.StorageOptionsProvider;

/**
 * Renews a table's vended storage options with one DescribeTable ({@code vend_credentials}) of
 * a REST namespace: the server itself or the driver's credential relay, with the non-secret
 * headers the catalog ships (a relay grant among them). Plain Java over the JDK's HTTP client, so
 * that a provider per open costs no native resource (lance-core's {@code RestNamespace} holds
 * one, and is never closed by lance-spark's provider factory).
 */
final class DescribeTableCredentials implements StorageOptionsProvider {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient HTTP = HttpClient.newBuilder()
      .version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(10)).build();

  private final String uri;
  private final String delimiter;
  private final Map<String, String> headers;
  private final List<String> tableId;

  DescribeTableCredentials(Map<String, String> namespaceProperties, List<String> tableId) {
    String u = namespaceProperties.get("uri");
    if (u == null) {
      throw new IllegalArgumentException("The namespace connection of table "
          + String.join(".", tableId) + " has no uri");
    }
    this.uri = u.endsWith("/") ? u.substring(0, u.length() - 1) : u;
    this.delimiter = namespaceProperties.getOrDefault("delimiter", "$");
    Map<String, String> h = new LinkedHashMap<>();
    namespaceProperties.forEach((k, v) -> {
      if (k.startsWith("header.")) {
        h.put(k.substring("header.".length()), v);
      }
    });
    this.headers = Map.copyOf(h);
    this.tableId = List.copyOf(tableId);
  }

  @Override
  public Map<String, String> fetchStorageOptions() {
    String table = String.join(".", tableId);
    String id = URLEncoder.encode(String.join(delimiter, tableId), StandardCharsets.UTF_8)
        .replace("+", "%20");
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("id", tableId);
    body.put("vend_credentials", true);
    HttpResponse<byte[]> r;
    try {
      HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(uri + "/v1/table/" + id
          + "/describe?delimiter=" + URLEncoder.encode(delimiter, StandardCharsets.UTF_8)))
          .timeout(Duration.ofSeconds(30))
          .header("Content-Type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofByteArray(JSON.writeValueAsBytes(body)));
      headers.forEach(b::header);
      r = HTTP.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
    } catch (IOException e) {
      throw new IllegalStateException("Cannot renew the storage credentials of table " + table
          + ": DescribeTable at " + uri + " failed: " + e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("Interrupted while renewing the storage credentials of "
          + "table " + table, e);
    }
    if (r.statusCode() / 100 != 2) {
      throw new IllegalStateException("Cannot renew the storage credentials of table " + table
          + ": DescribeTable at " + uri + " answered " + r.statusCode() + ": "
          + new String(r.body(), StandardCharsets.UTF_8));
    }
    try {
      JsonNode options = JSON.readTree(r.body()).get("storage_options");
      Map<String, String> out = new LinkedHashMap<>();
      if (options != null) {
        for (Iterator<Map.Entry<String, JsonNode>> it = options.fields(); it.hasNext(); ) {
          Map.Entry<String, JsonNode> e = it.next();
          out.put(e.getKey(), e.getValue().asText());
        }
      }
      if (out.isEmpty()) {
        throw new IllegalStateException("Cannot renew the storage credentials of table " + table
            + ": DescribeTable at " + uri + " vended none");
      }
      return CredentialRefresh.withRefreshOffset(out);
    } catch (IOException e) {
      throw new IllegalStateException("Cannot renew the storage credentials of table " + table
          + ": DescribeTable at " + uri + " answered what is not JSON", e);
    }
  }

  @Override
  public String providerId() {
    // Equal providers share lance-core's cached object store: one per namespace and table.
    return "lancerest DescribeTable " + uri + " " + tableId;
  }
}
