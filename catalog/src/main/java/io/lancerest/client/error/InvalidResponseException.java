package io.lancerest.client.error;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.exc.StreamReadException;
import com.fasterxml.jackson.databind.JsonMappingException;
import java.util.stream.Collectors;

/** The server answered 2xx with a body that is not the response the spec defines. */
public class InvalidResponseException extends LanceRestException {
  public InvalidResponseException(ErrorDetails details, Throwable cause) {
    super(details, cause);
  }

  /**
   * Why a body could not be read, in words that quote none of it. Jackson's own messages quote
   * the offending value and up to 500 characters of the body, and a DescribeTable body carries
   * vended storage credentials: neither the message nor the cause of this exception may hold
   * them. Says where (line and column, or the field path) and what kind of problem it was.
   */
  public static String reasonWithoutContent(Throwable e) {
    // A syntax error inside a nested value comes wrapped in a mapping error: syntax first.
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof StreamReadException p) {
        JsonLocation at = p.getLocation();
        String where = at == null ? "" : " at line " + at.getLineNr() + ", column "
            + at.getColumnNr();
        String kind = t instanceof com.fasterxml.jackson.core.io.JsonEOFException
            ? "JSON ends early" : "malformed JSON";
        return kind + where;
      }
    }
    if (e instanceof JsonMappingException m && !m.getPath().isEmpty()) {
      String path = m.getPath().stream()
          .map(r -> r.getFieldName() != null ? r.getFieldName() : "[" + r.getIndex() + "]")
          .collect(Collectors.joining("."));
      return "field '" + path + "' does not have the expected type";
    }
    if (e instanceof JsonMappingException) {
      return "the JSON does not have the expected shape";
    }
    return e.getClass().getSimpleName();
  }
}
