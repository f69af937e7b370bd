package io.lancerest.client;

import static org.junit.jupiter.api.Assertions.*;

import io.lancerest.client.model.*;
import java.nio.file.*;
import java.util.*;
import org.junit.jupiter.api.Test;
import org.lance.namespace.RestAdapter;

class SmokeTest {
  @Test
  void basic() throws Exception {
    Path dir = Files.createTempDirectory("smoke");
    RestAdapter a = new RestAdapter("dir", Map.of("root", dir.toString()), "127.0.0.1", 0);
    a.start();
    try (LanceRestClient c = LanceRestClient.create(Map.of("uri", "http://127.0.0.1:" + a.getPort()))) {
      c.createNamespace(new CreateNamespaceRequest(List.of("a"), null, Map.of("k", "v")));
      c.createNamespace(new CreateNamespaceRequest(List.of("a", "b c%é"), null, null));
      System.out.println(c.listAllNamespaces(List.of()).toList());
      System.out.println(c.listAllNamespaces(List.of("a")).toList());
      System.out.println(c.describeNamespace(new DescribeNamespaceRequest(List.of("a"))));
      System.out.println(c.namespaceExists(List.of("zz")));
      try { c.describeTable(DescribeTableRequest.of(List.of("a", "nope"))); } catch (Exception e) { System.out.println(e.getClass() + " " + e.getMessage()); }
      try { c.createNamespace(new CreateNamespaceRequest(List.of("a"), null, null)); } catch (Exception e) { System.out.println(e.getClass() + " " + e.getMessage()); }
    } finally {
      a.close();
    }
  }
}
