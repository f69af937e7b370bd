package io.lancerest.spark.mv.server;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lancerest.client.LanceJson;
import io.lancerest.client.error.CommunicationException;
import io.lancerest.client.error.ErrorCode;
import io.lancerest.client.error.LanceRestException;
import io.lancerest.spark.connector.ManagedVersioningException;
import io.lancerest.spark.mv.error.EnvelopeChecksumException;
import io.lancerest.spark.mv.error.InvalidOptionException;
import io.lancerest.spark.mv.error.InvalidViewDefinitionException;
import io.lancerest.spark.mv.error.MaterializedViewAlreadyExistsException;
import io.lancerest.spark.mv.error.MaterializedViewNotFoundException;
import io.lancerest.spark.mv.error.UnsupportedFunctionLanguageException;
import io.lancerest.spark.mv.error.VersionManagedTableException;
import io.lancerest.spark.mv.refresh.JobTracker;
import java.nio.charset.StandardCharsets;

/**
 * An error answered with the spec's {@code ErrorResponse} body ({@code error}, {@code code},
 * {@code instance}) and its HTTP status.
 */
final class ServiceError extends RuntimeException {
  final int status;
  final ErrorCode code;
  /** Seconds a client should wait before retrying (503), or 0. */
  final int retryAfterSeconds;

  ServiceError(int status, ErrorCode code, String message) {
    this(status, code, message, 0, null);
  }

  ServiceError(int status, ErrorCode code, String message, int retryAfterSeconds,
      Throwable cause) {
    super(message, cause);
    this.status = status;
    this.code = code;
    this.retryAfterSeconds = retryAfterSeconds;
  }

  static ServiceError badRequest(String message) {
    return new ServiceError(400, ErrorCode.INVALID_INPUT, message);
  }

  static ServiceError notFound(String message) {
    return new ServiceError(404, ErrorCode.TABLE_NOT_FOUND, message);
  }

  /** The body: {@code {"error": ..., "code": ..., "instance": path}}. */
  byte[] body(String instance) {
    ObjectNode n = LanceJson.mapper().createObjectNode();
    n.put("error", getMessage());
    n.put("code", code.code());
    n.put("instance", instance);
    return n.toString().getBytes(StandardCharsets.UTF_8);
  }

  /**
   * What a failure of the engine or the upstream is answered with: bad definitions and options
   * are 400, a missing view 404, an existing one 409, a table whose versions the upstream
   * manages 409 (code 19, invalid table state), an unreachable upstream 503, an upstream's
   * own answer keeps its status and code; anything else is 500.
   */
  static ServiceError of(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (c instanceof ServiceError s) {
        return s;
      }
      if (c instanceof CommunicationException) {
        return new ServiceError(503, ErrorCode.SERVICE_UNAVAILABLE, "The upstream namespace "
            + "cannot be reached: " + JobTracker.redact(c.getMessage()), 5, t);
      }
      if (c instanceof LanceRestException e) {
        ErrorCode code = e.code() != null ? e.code() : ErrorCode.INTERNAL;
        int status = e.httpStatus() > 0 ? e.httpStatus() : code.usualStatus();
        return new ServiceError(status, code, JobTracker.redact(e.getMessage()),
            status == 503 ? 5 : 0, t);
      }
      if (c instanceof MaterializedViewNotFoundException) {
        return new ServiceError(404, ErrorCode.TABLE_NOT_FOUND, c.getMessage(), 0, t);
      }
      if (c instanceof MaterializedViewAlreadyExistsException) {
        return new ServiceError(409, ErrorCode.TABLE_ALREADY_EXISTS, c.getMessage(), 0, t);
      }
      if (c instanceof VersionManagedTableException || c instanceof ManagedVersioningException) {
        // not 406/code 0, which clients take for a service without the route
        return new ServiceError(409, ErrorCode.INVALID_TABLE_STATE, c.getMessage(), 0, t);
      }
      if (c instanceof InvalidViewDefinitionException || c instanceof InvalidOptionException
          || c instanceof EnvelopeChecksumException
          || c instanceof UnsupportedFunctionLanguageException) {
        return new ServiceError(400, ErrorCode.INVALID_INPUT, c.getMessage(), 0, t);
      }
    }
    // The text of an unexpected failure may hold a signed URL or a key: masked like job messages.
    return new ServiceError(500, ErrorCode.INTERNAL, "Internal error of the view service ("
        + t.getClass().getSimpleName() + ": " + JobTracker.redact(String.valueOf(t.getMessage()))
        + ")", 0, t);
  }
}
