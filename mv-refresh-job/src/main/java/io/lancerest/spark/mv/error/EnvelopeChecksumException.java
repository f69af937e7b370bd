package io.lancerest.spark.mv.error;

/** {@code udtf_sha} does not match the SHA-256 of the envelope bytes. */
public class EnvelopeChecksumException extends InvalidViewDefinitionException {
  public EnvelopeChecksumException(String message) {
    super(message);
  }
}
