package io.lancerest.faults;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.client.LanceRestClient;
import io.lancerest.client.error.ClientConfigException;
import io.lancerest.client.error.InvalidResponseException;
import io.lancerest.spark.catalog.LanceRestCatalog;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Bad input gets a clear error (which object, what is wrong, what to do) and leaves nothing
 * behind: malformed identifiers, catalog options, and a server that answers nonsense.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class BadInputTest {
  static final String CAT = "fb";
  private FaultsFixture f;
  private FaultProxy proxy;
  private LanceRestClient direct;
  private String ns;

  @BeforeAll
  void start() {
    f = FaultsFixture.get();
    proxy = FaultProxy.start(f.server.uri());
    direct = f.directClient();
    f.registerCatalog(CAT, proxy.uri(), Map.of("retry.max-attempts", "2"));
    ns = FaultsFixture.unique("bi");
    f.sql("CREATE NAMESPACE " + CAT + "." + ns);
    f.sql("CREATE TABLE " + CAT + "." + ns + ".good (id BIGINT)");
    f.sql("INSERT INTO " + CAT + "." + ns + ".good VALUES (1)");
  }

  @BeforeEach
  void clearRules() {
    proxy.reset();
  }

  @AfterAll
  void stop() {
    proxy.close();
    direct.close();
  }

  private LanceRestCatalog catalog() {
    return (LanceRestCatalog) f.spark.sessionState().catalogManager().catalog(CAT);
  }

  private List<String> rootNamespaces() {
    return direct.listAllNamespaces(List.of()).toList();
  }

  // ---------------------------------------------------------------- identifiers

  @Test
  void aNamespaceNameWithTheDelimiterIsRefusedAndNothingIsCreated() {
    ClientConfigException e = assertThrows(ClientConfigException.class,
        () -> f.sql("CREATE NAMESPACE " + CAT + ".`dl$x`"));
    assertEquals("Name 'dl$x' in identifier `dl$x` contains the namespace delimiter '$'; the "
        + "server would read it as nested names. Rename it, or configure another 'delimiter' "
        + "for this catalog", e.getMessage());
    assertFalse(rootNamespaces().contains("dl"), "no nested namespace was made");
  }

  @Test
  void aTableNameWithTheDelimiterIsRefusedAndNothingIsCreated() {
    ClientConfigException e = assertThrows(ClientConfigException.class,
        () -> f.sql("CREATE TABLE " + CAT + "." + ns + ".`a$b` (id INT)"));
    assertTrue(e.getMessage().startsWith("Name 'a$b' in identifier " + ns + ".`a$b` contains"),
        e.getMessage());
    assertEquals(List.of("good"), direct.listAllTables(List.of(ns)).toList());
    assertFalse(rootNamespaces().contains(ns + "$a"));
  }

  @Test
  void emptyNamesAreRefused() {
    ClientConfigException e1 = assertThrows(ClientConfigException.class,
        () -> catalog().createNamespace(new String[] {""}, Map.of()));
    assertEquals("Identifier `` has an empty part; every namespace and table name must be "
        + "non-empty", e1.getMessage());
    ClientConfigException e2 = assertThrows(ClientConfigException.class,
        () -> catalog().createTable(Identifier.of(new String[] {ns}, ""),
            new StructType().add("id", "int"), new Transform[0], Map.of()));
    assertTrue(e2.getMessage().contains("has an empty part"), e2.getMessage());
    assertThrows(ClientConfigException.class,
        () -> f.sql("CREATE TABLE " + CAT + "." + ns + ".`` (id INT)"));
    assertEquals(List.of("good"), direct.listAllTables(List.of(ns)).toList());
  }

  @Test
  void dotNamesThatUrlsCannotCarryAreRefused() {
    for (String name : List.of(".", "..")) {
      ClientConfigException e = assertThrows(ClientConfigException.class,
          () -> f.sql("CREATE NAMESPACE " + CAT + ".`" + name + "`"));
      assertTrue(e.getMessage().contains("path segment '" + name + "'"), e.getMessage());
      assertTrue(e.getMessage().endsWith("rename it"), e.getMessage());
    }
  }

  // ---------------------------------------------------------------- options

  static Stream<Arguments> badOptions() {
    return Stream.of(
        Arguments.of(Map.of("cache.ttl", "5"), "[cache.ttl]"),
        Arguments.of(Map.of("retry.max-atempts", "3"), "retry.max-atempts"),
        Arguments.of(Map.of("oauth2.clientid", "x"), "oauth2.clientid"),
        Arguments.of(Map.of("retry.max-attempts", "many"), "retry.max-attempts"),
        Arguments.of(Map.of("retry.max-attempts", "0"), "retry.max-attempts"),
        Arguments.of(Map.of("retry.max-attempts", "100000"), "retry.max-attempts"),
        Arguments.of(Map.of("read-timeout-ms", "-1"), "read-timeout-ms"),
        Arguments.of(Map.of("connect-timeout-ms", "1.5"), "connect-timeout-ms"),
        Arguments.of(Map.of("retry.initial-backoff-ms", "soon"), "retry.initial-backoff-ms"),
        Arguments.of(Map.of("cache.ttl-ms", "soon"), "cache.ttl-ms"),
        Arguments.of(Map.of("cache.ttl-ms", "-5"), "cache.ttl-ms"),
        Arguments.of(Map.of("uri", "not a url"), "uri"),
        Arguments.of(Map.of("uri", ""), "uri"),
        Arguments.of(Map.of("oauth2.credential", "no-colon"), "oauth2.credential"),
        Arguments.of(Map.of("oauth2.client-id", "only-id"), "oauth2"),
        Arguments.of(Map.of("token", "t", "oauth2.credential", "i:s"), "token"),
        Arguments.of(Map.of("parent", "a$$b"), "parent"),
        Arguments.of(Map.of("delimiter", ""), "delimiter"),
        Arguments.of(Map.of("tls.ca-file", "/nonexistent/ca.pem"), "tls.ca-file"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("badOptions")
  void badOptionsAreRefusedByName(Map<String, String> bad, String named) {
    Map<String, String> options = new HashMap<>(Map.of("uri", proxy.uri()));
    options.putAll(bad);
    LanceRestCatalog c = new LanceRestCatalog();
    ClientConfigException e = assertThrows(ClientConfigException.class,
        () -> c.initialize("badcat", new CaseInsensitiveStringMap(options)));
    assertTrue(e.getMessage().contains(named), e.getMessage());
    assertFalse(e.getMessage().contains("job-secret"), e.getMessage());
  }

  @Test
  void aBadOptionSurfacesOnTheFirstStatementThatUsesTheCatalog() {
    f.spark.conf().set("spark.sql.catalog.fb_bad", LanceRestCatalog.class.getName());
    f.spark.conf().set("spark.sql.catalog.fb_bad.uri", proxy.uri());
    f.spark.conf().set("spark.sql.catalog.fb_bad.retry.max-attempts", "lots");
    Exception e = assertThrows(Exception.class, () -> f.sql("SHOW NAMESPACES IN fb_bad"));
    Throwable root = e;
    while (!(root instanceof ClientConfigException) && root.getCause() != null) {
      root = root.getCause();
    }
    assertTrue(root instanceof ClientConfigException, String.valueOf(e));
    assertTrue(root.getMessage().contains("retry.max-attempts"), root.getMessage());
  }

  // ---------------------------------------------------------------- a server answering nonsense

  static Stream<Arguments> nonsense() {
    return Stream.of(
        Arguments.of("location is a number", "application/json", "{\"location\": 5}"),
        Arguments.of("location is a list", "application/json", "{\"location\": [\"a\"]}"),
        Arguments.of("location missing", "application/json", "{\"version\": 3}"),
        Arguments.of("storage_options is a string", "application/json",
            "{\"location\": \"file:///nowhere\", \"storage_options\": \"x\"}"),
        Arguments.of("a JSON array", "application/json", "[1, 2]"),
        Arguments.of("JSON null", "application/json", "null"),
        Arguments.of("an HTML page", "text/html", "<html><body>Welcome</body></html>"),
        Arguments.of("cut-off JSON", "application/json", "{\"location\": \"file:///x"),
        Arguments.of("empty body", "application/json", ""));
  }

  @ParameterizedTest(name = "DescribeTable: {0}")
  @MethodSource("nonsense")
  void nonsenseFromDescribeTableIsAClearError(String name, String type, String body) {
    proxy.on("POST", "table/describe").forId("good").always().body(200, type, body);
    Exception e = assertThrows(RuntimeException.class,
        () -> f.sql("SELECT * FROM " + CAT + "." + ns + ".good"));
    String m = e.getMessage();
    assertTrue(m.contains("DescribeTable '" + ns + ".good'")
        || m.contains("described table " + ns + ".good"), name + ": " + e);
    proxy.reset();
    assertEquals(1, f.sql("SELECT * FROM " + CAT + "." + ns + ".good").size(), "untouched");
  }

  /**
   * Read leniently by the client on purpose (LanceJson accepts a single value as an array, and a
   * missing list as empty): recorded here so a change of that choice is noticed.
   */
  @Test
  void someListShapesAreReadLeniently() {
    proxy.on("GET", "namespace/table/list").always().body(200, "application/json",
        "{\"tables\": \"abc\"}");
    assertEquals("[[" + ns + ",abc,false]]", f.sql("SHOW TABLES IN " + CAT + "." + ns).toString());
    proxy.reset();
    proxy.on("GET", "namespace/table/list").always().body(200, "application/json",
        "{\"names\": [\"a\"]}");
    assertEquals(0, f.sql("SHOW TABLES IN " + CAT + "." + ns).size());
  }

  static Stream<Arguments> nonsenseLists() {
    return Stream.of(
        Arguments.of("tables holds objects", "application/json", "{\"tables\": [{\"a\": 1}]}"),
        Arguments.of("page_token is an object", "application/json",
            "{\"tables\": [\"a\"], \"page_token\": {\"x\": 1}}"),
        Arguments.of("an HTML page", "text/html", "<html>login</html>"));
  }

  @ParameterizedTest(name = "ListTables: {0}")
  @MethodSource("nonsenseLists")
  void nonsenseFromListTablesIsAClearError(String name, String type, String body) {
    proxy.on("GET", "namespace/table/list").always().body(200, type, body);
    Exception e = assertThrows(RuntimeException.class,
        () -> f.sql("SHOW TABLES IN " + CAT + "." + ns));
    assertTrue(e.getMessage().contains("ListTables '" + ns + "'"), name + ": " + e);
  }

  @Test
  void aHugeAnswerIsRefusedWithoutReadingIt() {
    proxy.on("POST", "table/describe").forId("good").always().hugeBody(4L << 30);
    long t0 = System.nanoTime();
    InvalidResponseException e = assertThrows(InvalidResponseException.class,
        () -> f.sql("SELECT * FROM " + CAT + "." + ns + ".good"));
    assertTrue(e.getMessage().contains("is larger than the 256 MiB the client accepts"),
        e.getMessage());
    assertTrue(System.nanoTime() - t0 < 10_000_000_000L, "bounded in time too");
    proxy.on("GET", "namespace/table/list").always().hugeBody(300L << 20);
    assertThrows(InvalidResponseException.class,
        () -> f.sql("SHOW TABLES IN " + CAT + "." + ns));
  }
}
