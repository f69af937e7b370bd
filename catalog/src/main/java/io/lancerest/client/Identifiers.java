package io.lancerest.client;

import io.lancerest.client.error.ClientConfigException;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * Turns {@code List<String>} identifiers into the spec's delimited string form.
 *
 * <p>The empty list is the root namespace, sent as the delimiter itself. A part that contains the
 * delimiter, or an empty part, is rejected: the server would split it into a different, nested
 * identifier and the call would silently address another object.
 */
public final class Identifiers {
  private Identifiers() {}

  /** Joins {@code id} with {@code delimiter}; the root namespace (empty id) is the delimiter. */
  public static String join(List<String> id, String delimiter) {
    if (id == null || id.isEmpty()) {
      return delimiter;
    }
    validate(id, delimiter);
    return String.join(delimiter, id);
  }

  /** Rejects null or empty parts and parts that contain the delimiter, naming the part. */
  public static void validate(List<String> id, String delimiter) {
    for (String part : id) {
      if (part == null || part.isEmpty()) {
        throw new ClientConfigException(
            "Identifier " + display(id) + " has an empty part; every namespace and table name "
                + "must be non-empty");
      }
      if (part.contains(delimiter)) {
        throw new ClientConfigException(
            "Name '" + part + "' in identifier " + display(id) + " contains the namespace "
                + "delimiter '" + delimiter + "'; the server would read it as nested names. Rename "
                + "it, or configure another 'delimiter' for this catalog");
      }
    }
  }

  /** The identifier as a user wrote it: parts joined by dots, quoted where needed. */
  public static String display(List<String> id) {
    if (id == null || id.isEmpty()) {
      return "<root>";
    }
    StringBuilder sb = new StringBuilder();
    for (String part : id) {
      if (sb.length() > 0) {
        sb.append('.');
      }
      boolean plain = part != null && !part.isEmpty() && part.chars().allMatch(
          c -> Character.isLetterOrDigit(c) || c == '_' || c == '-');
      sb.append(plain ? part : "`" + part + "`");
    }
    return sb.toString();
  }

  /**
   * Percent-encodes one path segment (RFC 3986 unreserved characters are kept; everything else,
   * including space, '$', '/', '%' and non-ASCII, is encoded as UTF-8 bytes).
   */
  public static String encodePathSegment(String segment) {
    byte[] bytes = segment.getBytes(StandardCharsets.UTF_8);
    StringBuilder sb = new StringBuilder(bytes.length + 8);
    for (byte b : bytes) {
      int c = b & 0xff;
      if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
          || c == '-' || c == '.' || c == '_' || c == '~') {
        sb.append((char) c);
      } else {
        sb.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)))
            .append(Character.toUpperCase(Character.forDigit(c & 0xf, 16)));
      }
    }
    return sb.toString();
  }
}
