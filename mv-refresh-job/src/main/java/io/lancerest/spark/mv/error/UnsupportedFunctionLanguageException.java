package io.lancerest.spark.mv.error;

/** The function envelope is written for a runtime this JVM engine cannot run. */
public class UnsupportedFunctionLanguageException extends InvalidViewDefinitionException {
  private final String language;

  public UnsupportedFunctionLanguageException(String language, String message) {
    super(message);
    this.language = language;
  }

  /** The envelope's language as found (e.g. {@code python}). */
  public String language() {
    return language;
  }
}
