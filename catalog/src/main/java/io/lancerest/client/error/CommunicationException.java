package io.lancerest.client.error;

/**
 * No usable answer was received: the connection failed, was reset, or timed out. For a mutation
 * the server may or may not have applied it: callers re-read the state before acting again.
 */
public class CommunicationException extends LanceRestException {
  private final boolean outcomeUnknown;

  public CommunicationException(ErrorDetails details, boolean outcomeUnknown, Throwable cause) {
    super(details, cause);
    this.outcomeUnknown = outcomeUnknown;
  }

  @Override
  public boolean isOutcomeUnknown() {
    return outcomeUnknown;
  }
}
