package io.lancerest.client.error;

/** The transaction does not exist. */
public class TransactionNotFoundException extends NotFoundException {
  public TransactionNotFoundException(ErrorDetails details) {
    super(details);
  }

  public TransactionNotFoundException(ErrorDetails details, Throwable cause) {
    super(details, cause);
  }
}
