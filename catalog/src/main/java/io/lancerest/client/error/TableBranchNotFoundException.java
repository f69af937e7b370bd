package io.lancerest.client.error;

/** The table branch does not exist. */
public class TableBranchNotFoundException extends NotFoundException {
  public TableBranchNotFoundException(ErrorDetails details) {
    super(details);
  }

  public TableBranchNotFoundException(ErrorDetails details, Throwable cause) {
    super(details, cause);
  }
}
