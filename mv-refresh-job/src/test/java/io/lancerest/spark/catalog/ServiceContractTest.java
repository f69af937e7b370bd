package io.lancerest.spark.catalog;

import io.lancerest.spark.mv.server.MaterializedViewServer;
import io.lancerest.spark.mv.server.ServerConfig;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The catalog's contract against the directory server (catalog module's {@code
 * DirServerContractTest}) again, through the materialized-view service in front of it: clients
 * that point their {@code uri} at the service lose nothing. Runs in a JVM of its own (the own-jvm execution):
 * the contract's {@code SharedSpark} starts its own SparkContext.
 */
class ServiceContractTest extends DirServerContractTest {
  private static final String CATALOG = "lance_svc";
  private MaterializedViewServer service;

  @BeforeAll
  void startService() {
    SharedSpark s = SharedSpark.get();
    service = MaterializedViewServer.start(s.spark.newSession(), ServerConfig.parse(
        new String[] {"--upstream", s.server.uri(), "--port", "0", "--auto-refresh", "false"}));
    String p = "spark.sql.catalog." + CATALOG;
    s.spark.conf().set(p, LanceRestCatalog.class.getName());
    s.spark.conf().set(p + ".uri", "http://127.0.0.1:" + service.port());
  }

  @AfterAll
  void stopService() {
    service.close();
  }

  @Override
  String catalog() {
    return CATALOG;
  }

  @Override
  boolean runsServerIndependentCases() {
    return false;
  }
}
