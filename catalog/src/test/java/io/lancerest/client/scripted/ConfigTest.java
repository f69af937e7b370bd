package io.lancerest.client.scripted;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancerest.client.RestClientConfig;
import io.lancerest.client.error.ClientConfigException;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** Bad options fail at construction, with a message that names the option. */
class ConfigTest {
  private static final String URI = "http://localhost:2333";

  private static Map<String, String> with(String... kv) {
    Map<String, String> o = new HashMap<>();
    o.put("uri", URI);
    for (int i = 0; i < kv.length; i += 2) {
      o.put(kv[i], kv[i + 1]);
    }
    return o;
  }

  private static ClientConfigException invalid(Map<String, String> options) {
    return assertThrows(ClientConfigException.class,
        () -> RestClientConfig.fromProperties(options, Map.of()));
  }

  @ParameterizedTest(name = "''{0}''")
  @ValueSource(strings = {"", "   "})
  void missingOrBlankUriIsRejected(String value) {
    Map<String, String> o = with();
    o.put("uri", value);
    assertTrue(invalid(o).getMessage().startsWith("Option 'uri' is required"));
    o.remove("uri");
    assertTrue(invalid(o).getMessage().startsWith("Option 'uri' is required"));
  }

  @Test
  void nonHttpUriIsRejected() {
    assertEquals("Option 'uri' must be an http:// or https:// URL, got 'ftp://x'",
        invalid(with("uri", "ftp://x")).getMessage());
    assertTrue(invalid(with("uri", "http://bad host")).getMessage()
        .startsWith("Option 'uri' is not a valid URL"));
  }

  @ParameterizedTest(name = "{0}={1}")
  @CsvSource({
      "connect-timeout-ms, abc", "connect-timeout-ms, -1", "connect-timeout-ms, 0",
      "read-timeout-ms, 1.5", "call-timeout-ms, -3", "retry.max-attempts, 0",
      "retry.max-attempts, five", "retry.max-attempts, 4294967296",
      "retry.initial-backoff-ms, x", "retry.max-backoff-ms, -100",
      "read-timeout-ms, 99999999999999999999", "connect-timeout-ms, 3000000000",
      "pool.keep-alive-ms, 0", "pool.keep-alive-ms, soon"})
  void badNumberNamesTheOption(String option, String value) {
    String m = invalid(with(option, value)).getMessage();
    assertTrue(m.startsWith("Option '" + option + "' must be"), m);
  }

  @Test
  void numbersAreRead() {
    RestClientConfig c = RestClientConfig.fromProperties(with("retry.max-attempts", " 7 ",
        "read-timeout-ms", "1500", "call-timeout-ms", "0"), Map.of());
    assertEquals(7, c.retryMaxAttempts());
    assertEquals(Duration.ofMillis(1500), c.readTimeout());
    assertEquals(Duration.ZERO, c.callTimeout());
    assertEquals(Duration.ofSeconds(4), c.keepAlive(), "default keep-alive");
    assertEquals(Duration.ofMillis(250), RestClientConfig.fromProperties(
        with("pool.keep-alive-ms", "250"), Map.of()).keepAlive());
  }

  @Test
  void missingEnvironmentVariableNamesOptionAndVariable() {
    assertEquals("Option 'token' refers to environment variable LANCE_TOKEN_UNSET, which is not "
        + "set; export it or give the value directly",
        invalid(with("token", "env:LANCE_TOKEN_UNSET")).getMessage());
    assertTrue(invalid(with("oauth2.client-id", "a", "oauth2.client-secret", "env:NOPE"))
        .getMessage().startsWith("Option 'oauth2.client-secret' refers to environment variable "
            + "NOPE"));
  }

  @Test
  void environmentVariableIsResolvedAndHidden() {
    RestClientConfig c = RestClientConfig.fromProperties(with("api_key", "env:KEY"),
        Map.of("KEY", "from-env-value"));
    assertEquals("from-env-value", c.apiKey().reveal());
    assertFalse(c.toString().contains("from-env-value"), c.toString());
  }

  @Test
  void fileSecretIsReadTrimmedAndHiddenAndAMissingOneNamesOptionAndPath() throws Exception {
    java.nio.file.Path f = java.nio.file.Files.createTempFile("token", ".txt");
    try {
      java.nio.file.Files.writeString(f, "  from-file-value\n");
      RestClientConfig c = RestClientConfig.fromProperties(with("token", "file:" + f), Map.of());
      assertEquals("from-file-value", c.token().reveal());
      assertFalse(c.toString().contains("from-file-value"), c.toString());
      java.nio.file.Files.writeString(f, " \n");
      assertEquals("Option 'token' refers to file " + f + ", which is empty",
          invalid(with("token", "file:" + f)).getMessage());
    } finally {
      java.nio.file.Files.deleteIfExists(f);
    }
    assertEquals("Option 'api_key' refers to file " + f + ", which cannot be read "
        + "(NoSuchFileException); check the path and its permissions, or give the value directly",
        invalid(with("api_key", "file:" + f)).getMessage());
  }

  @Test
  void tokenAndOAuth2TogetherAreRejected() {
    assertEquals("Options 'token' and 'oauth2.*' both configure the bearer token; set only one",
        invalid(with("token", "t", "oauth2.credential", "id:secret")).getMessage());
  }

  @Test
  void incompleteOAuth2IsRejected() {
    assertTrue(invalid(with("oauth2.client-id", "id")).getMessage()
        .startsWith("OAuth2 needs both a client id and a client secret"));
    assertEquals("Option 'oauth2.credential' must be '<client_id>:<client_secret>'",
        invalid(with("oauth2.credential", "no-colon")).getMessage());
  }

  @Test
  void emptyDelimiterIsRejected() {
    assertEquals("Option 'delimiter' must not be empty (default is '$')",
        invalid(with("delimiter", "")).getMessage());
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"retry.max-attempt", "oauth2.client_id", "tls.ca_file",
      "retry.backoff-ms", "pool.keepalive-ms"})
  void misspelledOptionOfTheClientIsRejected(String option) {
    String m = invalid(with(option, "1")).getMessage();
    assertTrue(m.startsWith("Unknown option '" + option + "'"), m);
  }

  @Test
  void optionsOfOtherComponentsAreLeftAlone() {
    RestClientConfig c = RestClientConfig.fromProperties(
        with("type", "rest", "spark.some.thing", "x", "storage.region", "eu"), Map.of());
    assertEquals(URI, c.uri().toString());
  }

  @Test
  void defaultTokenUriIsRelativeToTheServer() {
    RestClientConfig c = RestClientConfig.fromProperties(
        with("uri", URI + "/base/", "oauth2.credential", "id:sec"), Map.of());
    assertEquals(URI + "/base/oauth/token", c.oauth2TokenUri().toString());
    assertEquals("id", c.oauth2ClientId());
    assertFalse(c.toString().contains("sec}") || c.toString().contains(":sec"), c.toString());
  }
}
