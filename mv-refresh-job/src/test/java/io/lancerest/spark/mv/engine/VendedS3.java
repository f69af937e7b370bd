package io.lancerest.spark.mv.engine;

import io.lancerest.client.testing.ExpiringKeyS3Proxy;
import io.lancerest.client.testing.S3ProxyFixture;
import io.lancerest.client.testing.VendingNamespace;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/**
 * A token-protected namespace that vends S3 keys which expire: an anonymous s3proxy, an
 * {@link ExpiringKeyS3Proxy} in front of it, lance-core's dir server on an {@code s3://} root
 * (writing to s3proxy directly, with a key of its own) and a {@link VendingNamespace} in front of
 * that; and an {@link EngineFixture} whose catalog talks to the vending namespace with
 * {@code token} set to {@code tokenSetting} (the token itself, or a reference to it) and has no
 * {@code storage.*} options of its own.
 */
final class VendedS3 implements AutoCloseable {
  final S3ProxyFixture s3;
  final ExpiringKeyS3Proxy keys;
  final VendingNamespace vending;
  final EngineFixture f;

  private VendedS3(S3ProxyFixture s3, ExpiringKeyS3Proxy keys, VendingNamespace vending,
      EngineFixture f) {
    this.s3 = s3;
    this.keys = keys;
    this.vending = vending;
    this.f = f;
  }

  static VendedS3 start(String root, String token, String tokenSetting, Duration lifetime,
      String master, Map<String, String> catalogOptions) {
    S3ProxyFixture s3 = S3ProxyFixture.startAnonymous();
    ExpiringKeyS3Proxy keys = null;
    EngineFixture f = null;
    VendingNamespace vending = null;
    try {
      keys = ExpiringKeyS3Proxy.start(s3);
      Map<String, String> server = new HashMap<>(s3.storageOptions("storage."));
      server.put("root", s3.uri(root));
      f = EngineFixture.onServer(server, catalogOptions, master);
      vending = VendingNamespace.start(f.uri, token, keys, lifetime);
      String p = "spark.sql.catalog." + EngineFixture.CATALOG;
      f.spark.conf().set(p + ".uri", vending.uri());
      f.spark.conf().set(p + ".token", tokenSetting);
      return new VendedS3(s3, keys, vending, f);
    } catch (RuntimeException | AssertionError e) {
      new VendedS3(s3, keys, vending, f).close();
      throw e;
    }
  }

  @Override
  public void close() {
    try {
      if (f != null) {
        f.close();
      }
      if (vending != null) {
        vending.close();
      }
      if (keys != null) {
        keys.close();
      }
    } finally {
      s3.close();
    }
  }
}
