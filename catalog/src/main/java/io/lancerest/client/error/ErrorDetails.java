package io.lancerest.client.error;

import io.lancerest.client.spec.Operation;

/**
 * The facts about one failed call, from which an exception and its message are made.
 *
 * @param summary what went wrong, in words for a user (e.g. "table not found")
 * @param hint what to do about it, or null
 */
public record ErrorDetails(
    String summary,
    String hint,
    ErrorCode code,
    int httpStatus,
    Operation operation,
    String identifier,
    String serverMessage,
    String requestId) {

  /** A readable one-line message. */
  public String render() {
    StringBuilder sb = new StringBuilder();
    if (operation != null) {
      sb.append(operation.specName());
      if (identifier != null) {
        sb.append(" '").append(identifier).append('\'');
      }
      sb.append(": ");
    } else if (identifier != null) {
      sb.append('\'').append(identifier).append("': ");
    }
    sb.append(summary);
    if (serverMessage != null && !serverMessage.isBlank()) {
      sb.append(" (server said: ").append(serverMessage).append(')');
    }
    if (hint != null) {
      sb.append(". ").append(hint);
    }
    StringBuilder tail = new StringBuilder();
    if (httpStatus > 0) {
      tail.append("HTTP ").append(httpStatus);
    }
    if (code != null) {
      tail.append(tail.length() > 0 ? ", " : "").append("code ").append(code.code());
    }
    if (requestId != null) {
      tail.append(tail.length() > 0 ? ", " : "").append("request id ").append(requestId);
    }
    if (tail.length() > 0) {
      sb.append(" [").append(tail).append(']');
    }
    return sb.toString();
  }

  public ErrorDetails withSummary(String newSummary, String newHint) {
    return new ErrorDetails(
        newSummary, newHint, code, httpStatus, operation, identifier, serverMessage, requestId);
  }
}
