package io.lancerest.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.yaml.snakeyaml.Yaml;

/**
 * Every example in the spec documents the models are generated from, read into its generated
 * model and written back with the client's mapper: the JSON must be the example again. What a
 * schema does not declare (the error examples' RFC 7807 {@code type}, {@code title},
 * {@code status}) is ignored on read, as any unknown field is, so it is compared without those.
 */
class SpecExamplesTest {
  private static final ObjectMapper JSON = LanceJson.mapper();
  private static final String MODELS = "io.lancerest.client.model.";

  /** One example: where it stands, the schema it is of, and the JSON to read. */
  private record Example(String where, String schema, JsonNode json) {}

  @ParameterizedTest
  @ValueSource(strings = {"lance-namespace-openapi.yaml", "materialized-view-openapi.yaml"})
  void everyExampleRoundTripsThroughTheGeneratedModels(String document) throws Exception {
    JsonNode doc = load(Path.of("src/main/openapi", document));
    List<Example> examples = new ArrayList<>();
    int[] found = {0};
    collect(doc, doc, "", examples, found);

    assertTrue(examples.size() >= 10, document + ": only " + examples.size() + " examples found");
    assertEquals(found[0], examples.size(), document + ": an example was found but not checked");
    for (Example e : examples) {
      Class<?> type = Class.forName(MODELS + e.schema());
      Object model = JSON.treeToValue(e.json(), type);
      JsonNode written = JSON.valueToTree(model);
      JsonNode expected = declaredOnly(doc, e.json(), schemaNode(doc, e.schema()));
      assertTrue(expected.equals(Numbers.BY_VALUE, written),
          e.where() + " through " + type.getSimpleName() + ": wrote " + written
              + ", expected " + expected);
    }
  }

  /** The mapper reads what the example has and the model does not know without failing. */
  @ParameterizedTest
  @ValueSource(strings = {"ListNamespacesResponse", "DescribeTableResponse"})
  void unknownFieldsAreIgnoredOnRead(String schema) throws Exception {
    ObjectNode in = JSON.createObjectNode().put("not_in_the_spec", 1);
    in.putObject("nested_unknown").put("a", "b");
    Object model = JSON.treeToValue(in, Class.forName(MODELS + schema));
    assertEquals(JSON.createObjectNode(), JSON.valueToTree(model));
  }

  // ----------------------------------------------------------------- where the examples are

  /**
   * Walks the document. An {@code example} of a component schema or of one of its properties
   * becomes the JSON of that schema (the property wrapped in an object); a response's
   * {@code example} or named {@code examples} become the JSON of the response's schema.
   */
  private static void collect(JsonNode doc, JsonNode node, String path, List<Example> out,
      int[] found) {
    if (node.isObject()) {
      if (node.has("example")) {
        found[0]++;
        out.add(example(doc, path, node.get("example")));
      }
      if (node.has("examples") && node.has("schema")) {
        String schema = refName(node.get("schema"));
        for (Iterator<Map.Entry<String, JsonNode>> it = node.get("examples").fields();
            it.hasNext(); ) {
          Map.Entry<String, JsonNode> named = it.next();
          JsonNode ex = named.getValue().has("$ref")
              ? resolve(doc, named.getValue().get("$ref").asText()) : named.getValue();
          found[0]++;
          out.add(new Example(path + "/examples/" + named.getKey(), schema, ex.get("value")));
        }
      }
      for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
        Map.Entry<String, JsonNode> f = it.next();
        if (f.getKey().equals("examples") && !node.has("schema")) {
          // Only the named examples the responses refer to (followed above) may stand here.
          assertEquals("/components", path, "examples outside a response at " + path);
        } else if (!f.getKey().equals("example") && !f.getKey().equals("examples")) {
          collect(doc, f.getValue(), path + "/" + f.getKey(), out, found);
        }
      }
    } else if (node.isArray()) {
      for (int i = 0; i < node.size(); i++) {
        collect(doc, node.get(i), path + "/" + i, out, found);
      }
    }
  }

  private static Example example(JsonNode doc, String path, JsonNode value) {
    String[] p = path.split("/");
    // /components/responses/<R>/content/application~json with a schema beside the example
    if (p.length >= 3 && p[1].equals("components") && p[2].equals("responses")) {
      JsonNode content = at(doc, path);
      return new Example(path + "/example", refName(content.get("schema")), value);
    }
    // /components/schemas/<S>[/properties/<P>]...
    if (p.length >= 4 && p[1].equals("components") && p[2].equals("schemas")) {
      String schema = p[3];
      JsonNode json = value;
      for (int i = p.length - 1; i >= 4; i--) {
        if (p[i - 1].equals("properties")) {
          ObjectNode wrap = JSON.createObjectNode();
          wrap.set(p[i], json);
          json = wrap;
          i--;
        } else {
          fail(path + ": an example under '" + p[i] + "' is not one this test places");
        }
      }
      if (!hasModel(schema)) {
        // A plain schema (a string with known values) has no class: check it as the value of
        // a property that refers to it.
        String[] holder = referrer(doc, schema);
        ObjectNode wrap = JSON.createObjectNode();
        wrap.set(holder[1], json);
        return new Example(path + "/example", holder[0], wrap);
      }
      return new Example(path + "/example", schema, json);
    }
    throw new AssertionError(path + ": an example outside schemas and responses");
  }

  private static boolean hasModel(String schema) {
    try {
      Class.forName(MODELS + schema);
      return true;
    } catch (ClassNotFoundException e) {
      return false;
    }
  }

  /** A schema and property name whose property is a $ref to {@code schema}. */
  private static String[] referrer(JsonNode doc, String schema) {
    String ref = "#/components/schemas/" + schema;
    for (Iterator<Map.Entry<String, JsonNode>> s = doc.at("/components/schemas").fields();
        s.hasNext(); ) {
      Map.Entry<String, JsonNode> e = s.next();
      for (Iterator<Map.Entry<String, JsonNode>> p = e.getValue().path("properties").fields();
          p.hasNext(); ) {
        Map.Entry<String, JsonNode> prop = p.next();
        if (ref.equals(prop.getValue().path("$ref").asText()) && hasModel(e.getKey())) {
          return new String[] {e.getKey(), prop.getKey()};
        }
      }
    }
    throw new AssertionError("no model refers to " + schema);
  }

  // ----------------------------------------------------------------- what is compared

  /** {@code json} without what {@code schema} does not declare, recursively. */
  private static JsonNode declaredOnly(JsonNode doc, JsonNode json, JsonNode declared) {
    JsonNode schema = concrete(doc, declared);
    if (json.isObject() && schema.has("properties")) {
      ObjectNode out = JSON.createObjectNode();
      json.fields().forEachRemaining(f -> {
        JsonNode prop = schema.get("properties").get(f.getKey());
        if (prop != null) {
          out.set(f.getKey(), declaredOnly(doc, f.getValue(), prop));
        }
      });
      return out;
    }
    if (json.isArray() && schema.has("items")) {
      ArrayNode out = JSON.createArrayNode();
      json.forEach(item -> out.add(declaredOnly(doc, item, schema.get("items"))));
      return out;
    }
    return json;
  }

  /** The schema itself: a $ref followed, a {@code oneOf} of null and one schema unwrapped. */
  private static JsonNode concrete(JsonNode doc, JsonNode schema) {
    if (schema.has("$ref")) {
      return concrete(doc, resolve(doc, schema.get("$ref").asText()));
    }
    if (schema.has("oneOf")) {
      for (JsonNode alt : schema.get("oneOf")) {
        if (!"null".equals(alt.path("type").asText())) {
          return concrete(doc, alt);
        }
      }
    }
    return schema;
  }

  private static JsonNode schemaNode(JsonNode doc, String schema) {
    JsonNode s = doc.at("/components/schemas/" + schema);
    assertFalse(s.isMissingNode(), "no schema " + schema);
    return s;
  }

  // ----------------------------------------------------------------- plumbing

  private static JsonNode load(Path file) throws IOException {
    try (Reader r = Files.newBufferedReader(file)) {
      Object yaml = new Yaml().load(r);
      return JSON.valueToTree(yaml);
    }
  }

  private static JsonNode resolve(JsonNode doc, String ref) {
    assertTrue(ref.startsWith("#/"), "only local references: " + ref);
    return at(doc, ref.substring(1));
  }

  private static JsonNode at(JsonNode doc, String path) {
    JsonNode n = doc.at(path.replace("application/json", "application~1json"));
    assertFalse(n.isMissingNode(), "nothing at " + path);
    return n;
  }

  private static String refName(JsonNode schema) {
    String ref = schema.path("$ref").asText();
    assertTrue(ref.startsWith("#/components/schemas/"), "not a schema reference: " + schema);
    return ref.substring("#/components/schemas/".length());
  }

  /** 1 and 1L and 1.0 are the same number on the wire. */
  private static final class Numbers {
    static final java.util.Comparator<JsonNode> BY_VALUE = (a, b) -> {
      if (a.isNumber() && b.isNumber()) {
        return a.decimalValue().compareTo(b.decimalValue());
      }
      return a.equals(b) ? 0 : 1;
    };
  }
}
