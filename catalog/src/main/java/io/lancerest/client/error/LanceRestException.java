package io.lancerest.client.error;

import io.lancerest.client.spec.Operation;

/**
 * Base of every error raised by the REST client. It carries what a user or an operator needs to
 * find the failing call: the spec error code (when the server sent one), the HTTP status, the
 * operation, the identifier, the server's own message and the request id.
 *
 * <p>Messages never contain request headers or bodies, so secrets cannot leak through them.
 */
public class LanceRestException extends RuntimeException {
  private final ErrorCode code;
  private final int httpStatus;
  private final Operation operation;
  private final String identifier;
  private final String serverMessage;
  private final String requestId;

  public LanceRestException(ErrorDetails details) {
    this(details, null);
  }

  public LanceRestException(ErrorDetails details, Throwable cause) {
    super(details.render(), cause);
    this.code = details.code();
    this.httpStatus = details.httpStatus();
    this.operation = details.operation();
    this.identifier = details.identifier();
    this.serverMessage = details.serverMessage();
    this.requestId = details.requestId();
  }

  /** The spec error code, or null when the server sent none (or the error is client-side). */
  public ErrorCode code() {
    return code;
  }

  /** The HTTP status, or 0 when no response was received. */
  public int httpStatus() {
    return httpStatus;
  }

  public Operation operation() {
    return operation;
  }

  /** The identifier of the call as the user wrote it (parts joined by '.'), or null. */
  public String identifier() {
    return identifier;
  }

  /** The server's message, as sent (truncated to a readable length), or null. */
  public String serverMessage() {
    return serverMessage;
  }

  /** The request id the server (or a proxy) returned, or null. */
  public String requestId() {
    return requestId;
  }

  /** True when the request may have been applied by the server although it failed here. */
  public boolean isOutcomeUnknown() {
    return false;
  }
}
