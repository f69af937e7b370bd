package io.lancerest.client.error;

/** The error codes of the spec's {@code ErrorResponse.code}. */
public enum ErrorCode {
  UNSUPPORTED(0, 406),
  NAMESPACE_NOT_FOUND(1, 404),
  NAMESPACE_ALREADY_EXISTS(2, 409),
  NAMESPACE_NOT_EMPTY(3, 409),
  TABLE_NOT_FOUND(4, 404),
  TABLE_ALREADY_EXISTS(5, 409),
  TABLE_INDEX_NOT_FOUND(6, 404),
  TABLE_INDEX_ALREADY_EXISTS(7, 409),
  TABLE_TAG_NOT_FOUND(8, 404),
  TABLE_TAG_ALREADY_EXISTS(9, 409),
  TRANSACTION_NOT_FOUND(10, 404),
  TABLE_VERSION_NOT_FOUND(11, 404),
  TABLE_COLUMN_NOT_FOUND(12, 404),
  INVALID_INPUT(13, 400),
  CONCURRENT_MODIFICATION(14, 409),
  PERMISSION_DENIED(15, 403),
  UNAUTHENTICATED(16, 401),
  SERVICE_UNAVAILABLE(17, 503),
  INTERNAL(18, 500),
  INVALID_TABLE_STATE(19, 409),
  TABLE_SCHEMA_VALIDATION_ERROR(20, 400),
  THROTTLING(21, 429),
  TABLE_BRANCH_NOT_FOUND(22, 404),
  TABLE_BRANCH_ALREADY_EXISTS(23, 409);

  private final int code;
  private final int usualStatus;

  ErrorCode(int code, int usualStatus) {
    this.code = code;
    this.usualStatus = usualStatus;
  }

  public int code() {
    return code;
  }

  /** The HTTP status the spec usually pairs with this code. */
  public int usualStatus() {
    return usualStatus;
  }

  /** The code for a number, or null when the number is not a spec code. */
  public static ErrorCode fromCode(int code) {
    for (ErrorCode c : values()) {
      if (c.code == code) {
        return c;
      }
    }
    return null;
  }
}
