package io.lancerest.client.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.lancerest.client.error.AlreadyExistsException;
import io.lancerest.client.error.ConflictException;
import io.lancerest.client.error.ErrorCode;
import io.lancerest.client.error.ErrorDetails;
import io.lancerest.client.error.ForbiddenException;
import io.lancerest.client.error.InternalServerException;
import io.lancerest.client.error.InvalidInputException;
import io.lancerest.client.error.LanceRestException;
import io.lancerest.client.error.NamespaceAlreadyExistsException;
import io.lancerest.client.error.NamespaceNotEmptyException;
import io.lancerest.client.error.NamespaceNotFoundException;
import io.lancerest.client.error.NotFoundException;
import io.lancerest.client.error.ServiceUnavailableException;
import io.lancerest.client.error.TableAlreadyExistsException;
import io.lancerest.client.error.TableBranchAlreadyExistsException;
import io.lancerest.client.error.TableBranchNotFoundException;
import io.lancerest.client.error.TableColumnNotFoundException;
import io.lancerest.client.error.TableIndexAlreadyExistsException;
import io.lancerest.client.error.TableIndexNotFoundException;
import io.lancerest.client.error.TableNotFoundException;
import io.lancerest.client.error.TableTagAlreadyExistsException;
import io.lancerest.client.error.TableTagNotFoundException;
import io.lancerest.client.error.TableVersionNotFoundException;
import io.lancerest.client.error.ThrottledException;
import io.lancerest.client.error.TransactionNotFoundException;
import io.lancerest.client.error.UnauthenticatedException;
import io.lancerest.client.error.UnsupportedOperationByServerException;
import io.lancerest.client.spec.Operation;
import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * Turns a non-2xx answer into a typed exception, whatever shape the server gave it: the spec's
 * {@code ErrorResponse} ({@code code}), the upstream RestAdapter's
 * {@code {"error":{"message","type"}}} (whose {@code type} can name the wrong object), "not
 * supported" answered as 500, HTML or plain text from a proxy, or an empty body. It never fails
 * with a parse error of its own.
 */
public final class ErrorClassifier {
  private static final ObjectMapper MAPPER = new ObjectMapper();
  private static final int MAX_MESSAGE = 500;
  private static final Pattern TAGS = Pattern.compile("<[^>]*>");
  // Proxy error pages carry inline CSS and scripts: their text is noise, not a message.
  private static final Pattern SCRIPTS = Pattern.compile(
      "<(script|style)\\b[^>]*>.*?</\\1\\s*>", Pattern.CASE_INSENSITIVE | Pattern.DOTALL);
  private static final Pattern SPACES = Pattern.compile("\\s+");
  private static final Pattern BEARER = Pattern.compile("(?i)(bearer\\s+)[^\\s\"',;]+");
  private static final Pattern UNSUPPORTED =
      Pattern.compile("not supported|not implemented|unsupported|unimplemented");

  private ErrorClassifier() {}

  /** What was read from an error body. */
  record Parsed(ErrorCode code, String message, String type, boolean structured) {}

  public static LanceRestException classify(
      Operation op, String identifier, int status, String requestId, byte[] body) {
    return classify(op, identifier, status, requestId, body, List.of());
  }

  /**
   * As above; {@code sentSecrets} are credential values the request carried. A server that
   * echoes them in its error message must not make them part of ours.
   */
  public static LanceRestException classify(Operation op, String identifier, int status,
      String requestId, byte[] body, Collection<String> sentSecrets) {
    Parsed p = parse(body);
    String msg = redact(p.message(), sentSecrets);
    String lower = msg == null ? "" : msg.toLowerCase(Locale.ROOT);
    ErrorDetails base =
        new ErrorDetails("", null, p.code(), status, op, identifier, msg, requestId);

    if (p.code() != null) {
      return byCode(p.code(), base);
    }
    // 405: the route exists for another method only. The upstream RestAdapter serves some
    // POST routes of the spec (count_rows, stats, tags/list, index/list) as GET.
    if (status == 405 || status == 406 || status == 501
        || (status >= 500 && UNSUPPORTED.matcher(lower).find())) {
      return unsupported(base, status == 405);
    }
    if (lower.contains("not found") || lower.contains("does not exist")
        || (p.type() != null && p.type().contains("NotFound"))) {
      return notFound(op, subject(msg, p.type(), op), base);
    }
    if (lower.contains("already exists")
        || (p.type() != null && p.type().contains("AlreadyExists"))) {
      return alreadyExists(subject(msg, p.type(), op), base);
    }
    if (lower.contains("not empty")) {
      return new NamespaceNotEmptyException(base.withSummary("namespace is not empty",
          "Drop its tables and child namespaces first, or drop it with CASCADE"));
    }
    return byStatus(op, status, p.structured(), base);
  }

  private static LanceRestException byCode(ErrorCode code, ErrorDetails d) {
    return switch (code) {
      case UNSUPPORTED -> unsupported(d, false);
      case NAMESPACE_NOT_FOUND -> notFound(null, "namespace", d);
      case TABLE_NOT_FOUND -> notFound(null, "table", d);
      case TABLE_INDEX_NOT_FOUND -> notFound(null, "index", d);
      case TABLE_TAG_NOT_FOUND -> notFound(null, "tag", d);
      case TRANSACTION_NOT_FOUND -> notFound(null, "transaction", d);
      case TABLE_VERSION_NOT_FOUND -> notFound(null, "version", d);
      case TABLE_COLUMN_NOT_FOUND -> notFound(null, "column", d);
      case TABLE_BRANCH_NOT_FOUND -> notFound(null, "branch", d);
      case NAMESPACE_ALREADY_EXISTS -> alreadyExists("namespace", d);
      case TABLE_ALREADY_EXISTS -> alreadyExists("table", d);
      case TABLE_INDEX_ALREADY_EXISTS -> alreadyExists("index", d);
      case TABLE_TAG_ALREADY_EXISTS -> alreadyExists("tag", d);
      case TABLE_BRANCH_ALREADY_EXISTS -> alreadyExists("branch", d);
      case NAMESPACE_NOT_EMPTY -> new NamespaceNotEmptyException(d.withSummary(
          "namespace is not empty",
          "Drop its tables and child namespaces first, or drop it with CASCADE"));
      case INVALID_INPUT, TABLE_SCHEMA_VALIDATION_ERROR ->
          new InvalidInputException(d.withSummary("the server rejected the request as invalid",
              null));
      case CONCURRENT_MODIFICATION -> new ConflictException(d.withSummary(
          "concurrent modification", "Another writer changed the object; re-read and retry"));
      case INVALID_TABLE_STATE -> new ConflictException(
          d.withSummary("the table is in a state that does not allow this operation", null));
      case PERMISSION_DENIED -> forbidden(d);
      case UNAUTHENTICATED -> unauthenticated(d);
      case SERVICE_UNAVAILABLE -> unavailable(d);
      case INTERNAL -> internal(d);
      case THROTTLING -> throttled(d);
    };
  }

  private static LanceRestException byStatus(
      Operation op, int status, boolean structured, ErrorDetails d) {
    if (status == 404) {
      if (!structured && isOptionalRoute(op)) {
        return unsupported(d, true);
      }
      return notFound(op, subjectOf(op), d);
    }
    if (status == 409) {
      return switch (op) {
        case CREATE_NAMESPACE -> alreadyExists("namespace", d);
        case CREATE_TABLE, DECLARE_TABLE, REGISTER_TABLE, RENAME_TABLE,
            CREATE_MATERIALIZED_VIEW -> alreadyExists("table", d);
        case DROP_NAMESPACE -> new NamespaceNotEmptyException(
            d.withSummary("namespace is not empty", "Drop its contents first, or use CASCADE"));
        default -> new ConflictException(d.withSummary("conflict",
            "Another writer changed the object; re-read and retry"));
      };
    }
    if (status == 401) {
      return unauthenticated(d);
    }
    if (status == 403) {
      return forbidden(d);
    }
    if (status == 429) {
      return throttled(d);
    }
    if (status == 502 || status == 503 || status == 504 || status == 408) {
      return unavailable(d);
    }
    if (status >= 400 && status < 500) {
      return new InvalidInputException(
          d.withSummary("the server rejected the request (HTTP " + status + ")", null));
    }
    return internal(d);
  }

  /**
   * Routes that many servers do not have at all (newer additions to the spec), so that a bare
   * 404 means "no such route" rather than "no such table".
   */
  private static boolean isOptionalRoute(Operation op) {
    return switch (op) {
      case CREATE_MATERIALIZED_VIEW, REFRESH_MATERIALIZED_VIEW, DESCRIBE_MATERIALIZED_VIEW_JOB,
          LIST_MATERIALIZED_VIEW_JOBS, CANCEL_MATERIALIZED_VIEW_JOB, LIST_TABLE_BRANCHES,
          CREATE_TABLE_BRANCH, DELETE_TABLE_BRANCH, ALTER_TABLE_BACKFILL_COLUMNS,
          BATCH_CREATE_TABLE_VERSIONS, BATCH_COMMIT_TABLES -> true;
      default -> false;
    };
  }

  private static String subjectOf(Operation op) {
    if (op == null) {
      return "object";
    }
    String name = op.name();
    if (name.contains("NAMESPACE") && op != Operation.LIST_TABLES) {
      return "namespace";
    }
    if (name.contains("TRANSACTION")) {
      return "transaction";
    }
    return name.equals("LIST_TABLES") ? "namespace" : "table";
  }

  /**
   * The kind of object an error is about. The server's message wins over its {@code type},
   * because the upstream server is known to send a wrong type (a missing table typed as
   * NamespaceNotFoundException).
   */
  static String subject(String message, String type, Operation op) {
    String m = message == null ? "" : message.trim().toLowerCase(Locale.ROOT);
    for (String s : new String[] {"namespace", "table", "index", "tag", "version", "branch",
        "column", "transaction"}) {
      if (startsWithWord(m, s) || startsWithWord(m, "the " + s)) {
        // "Table version 9 not found" names the version, not the table; "Table tags_daily not
        // found" names a table, hence whole words only.
        if (s.equals("table")) {
          for (String sub : new String[] {"version", "tag", "index", "branch", "column"}) {
            if (startsWithWord(m, "table " + sub)) {
              return sub;
            }
          }
        }
        return s;
      }
    }
    if (type != null) {
      String t = type.toLowerCase(Locale.ROOT);
      for (String s : new String[] {"namespace", "index", "tag", "version", "branch", "column",
          "transaction", "table"}) {
        if (t.contains(s)) {
          return s;
        }
      }
    }
    return subjectOf(op);
  }

  private static boolean startsWithWord(String text, String word) {
    if (!text.startsWith(word)) {
      return false;
    }
    if (text.length() == word.length()) {
      return true;
    }
    char next = text.charAt(word.length());
    return !Character.isLetterOrDigit(next) && next != '_';
  }

  private static LanceRestException notFound(Operation op, String subject, ErrorDetails d) {
    Function<ErrorDetails, LanceRestException> make = switch (subject) {
      case "namespace" -> NamespaceNotFoundException::new;
      case "table" -> TableNotFoundException::new;
      case "index" -> TableIndexNotFoundException::new;
      case "tag" -> TableTagNotFoundException::new;
      case "version" -> TableVersionNotFoundException::new;
      case "branch" -> TableBranchNotFoundException::new;
      case "column" -> TableColumnNotFoundException::new;
      case "transaction" -> TransactionNotFoundException::new;
      default -> NotFoundException::new;
    };
    return make.apply(d.withSummary(subject + " not found", null));
  }

  private static LanceRestException alreadyExists(String subject, ErrorDetails d) {
    Function<ErrorDetails, LanceRestException> make = switch (subject) {
      case "namespace" -> NamespaceAlreadyExistsException::new;
      case "table" -> TableAlreadyExistsException::new;
      case "index" -> TableIndexAlreadyExistsException::new;
      case "tag" -> TableTagAlreadyExistsException::new;
      case "branch" -> TableBranchAlreadyExistsException::new;
      default -> AlreadyExistsException::new;
    };
    return make.apply(d.withSummary(subject + " already exists", null));
  }

  private static LanceRestException unsupported(ErrorDetails d, boolean unrouted) {
    return new UnsupportedOperationByServerException(d.withSummary(
        unrouted ? "the server has no route for this operation"
            : "the server does not support this operation",
        "This REST namespace server does not implement "
            + (d.operation() == null ? "it" : d.operation().specName())));
  }

  private static LanceRestException unauthenticated(ErrorDetails d) {
    return new UnauthenticatedException(d.withSummary("not authenticated",
        "Check the catalog's 'token', 'api_key' or 'oauth2.*' options"));
  }

  private static LanceRestException forbidden(ErrorDetails d) {
    return new ForbiddenException(d.withSummary("permission denied",
        "The credentials are valid but may not perform this operation"));
  }

  private static LanceRestException throttled(ErrorDetails d) {
    return new ThrottledException(d.withSummary("throttled by the server",
        "Retries were exhausted; lower the request rate or raise 'retry.max-attempts'"));
  }

  private static LanceRestException unavailable(ErrorDetails d) {
    return new ServiceUnavailableException(d.withSummary("service unavailable",
        "The server or a proxy in front of it is down or overloaded; try again later"));
  }

  private static LanceRestException internal(ErrorDetails d) {
    return new InternalServerException(d.withSummary("internal server error", null));
  }

  static String redact(String message, Collection<String> secrets) {
    if (message == null) {
      return null;
    }
    String out = message;
    for (String secret : secrets) {
      if (secret != null && secret.length() >= 4) {
        out = out.replace(secret, "****");
      }
    }
    return BEARER.matcher(out).replaceAll("$1****");
  }

  /** Reads any error body; never throws. */
  static Parsed parse(byte[] body) {
    if (body == null || body.length == 0) {
      return new Parsed(null, null, null, false);
    }
    String text = new String(body, StandardCharsets.UTF_8).trim();
    if (text.startsWith("{")) {
      try {
        JsonNode json = MAPPER.readTree(text);
        if (json != null && json.isObject()) {
          ErrorCode code = null;
          JsonNode c = json.get("code");
          if (c != null && c.canConvertToInt()) {
            code = ErrorCode.fromCode(c.asInt());
          }
          JsonNode err = json.get("error");
          String message = null;
          String type = null;
          if (err != null && err.isObject()) {
            message = textOf(err.get("message"));
            type = textOf(err.get("type"));
          } else if (err != null) {
            message = textOf(err);
          }
          String detail = textOf(json.get("detail"));
          if (message == null) {
            message = textOf(json.get("message"));
          }
          if (detail != null && !detail.equals(message)) {
            message = message == null ? detail : message + ": " + detail;
          }
          if (type == null) {
            type = textOf(json.get("type"));
          }
          boolean structured = code != null || message != null;
          return new Parsed(code, clip(message), type, structured);
        }
      } catch (Exception notJson) {
        // falls through: treated as text
      }
    }
    String noScripts = SCRIPTS.matcher(text).replaceAll(" ");
    String plain =
        SPACES.matcher(TAGS.matcher(noScripts).replaceAll(" ")).replaceAll(" ").trim();
    return new Parsed(null, plain.isEmpty() ? null : clip(plain), null, false);
  }

  private static String textOf(JsonNode n) {
    return n == null || n.isNull() ? null : (n.isValueNode() ? n.asText() : n.toString());
  }

  private static String clip(String s) {
    if (s == null) {
      return null;
    }
    return s.length() <= MAX_MESSAGE ? s : s.substring(0, MAX_MESSAGE) + "…";
  }
}
