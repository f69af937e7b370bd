package io.lancerest.spark.mv.udtf;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Objects;

/** Stable identities of partition keys: for resume checkpoints, error records and logs. */
final class PartitionKeys {
  /** {@link #id} of the NULL partition of a partitioned view. */
  static final String NULL_KEY_ID = id(true, null);

  /** The key of the single partition of an unpartitioned view. */
  static final String WHOLE_INPUT = "<all rows>";

  private PartitionKeys() {}

  /**
   * Type-tagged text of a key, so that the string "1" and the number 1, or NULL and the string
   * "null", never share an identity.
   */
  static String canonical(boolean partitioned, Object key) {
    if (!partitioned) {
      return "whole";
    }
    if (key == null) {
      return "null";
    }
    if (key instanceof byte[] b) {
      return "binary:" + HexFormat.of().formatHex(b);
    }
    return key.getClass().getSimpleName() + ":" + key;
  }

  /** A file-name-safe id of a key: SHA-256 of its canonical text, hex. */
  static String id(boolean partitioned, Object key) {
    return sha256(canonical(partitioned, key));
  }

  /** How users see the key (error table, logs). */
  static String display(boolean partitioned, Object key) {
    if (!partitioned) {
      return WHOLE_INPUT;
    }
    if (key == null) {
      return "NULL";
    }
    if (key instanceof byte[] b) {
      return "0x" + HexFormat.of().formatHex(b);
    }
    return String.valueOf(key);
  }

  /** NULL-safe key equality (NULL is its own partition; binary keys compare by content). */
  static boolean same(Object a, Object b) {
    if (a instanceof byte[] x && b instanceof byte[] y) {
      return Arrays.equals(x, y);
    }
    return Objects.equals(a, b);
  }

  static String sha256(String text) {
    try {
      MessageDigest d = MessageDigest.getInstance("SHA-256");
      return HexFormat.of().formatHex(d.digest(text.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is unavailable", e);
    }
  }
}
