package io.lancerest.client.error;

/** The branch exists already. */
public class TableBranchAlreadyExistsException extends AlreadyExistsException {
  public TableBranchAlreadyExistsException(ErrorDetails details) {
    super(details);
  }

  public TableBranchAlreadyExistsException(ErrorDetails details, Throwable cause) {
    super(details, cause);
  }
}
