package io.lancerest.spark.catalog;

import io.lancerest.client.Identifiers;
import io.lancerest.client.error.LanceRestException;
import io.lancerest.client.error.UnsupportedOperationByServerException;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * "State unknown" after a failed mutation: the answer was lost (reset, timeout) or the server
 * answered 5xx, so the change may or may not have been applied. The catalog then re-reads the
 * object and goes on from what it finds; it never repeats the mutation blindly (a second
 * create or drop would turn a success into a false conflict) and never cleans up data it cannot
 * prove it wrote.
 */
final class OutcomeUnknown {
  private static final Logger LOG = LoggerFactory.getLogger(OutcomeUnknown.class);

  private OutcomeUnknown() {}

  /** Whether {@code e}, raised by a mutation, leaves its outcome unknown. */
  static boolean is(RuntimeException e) {
    if (!(e instanceof LanceRestException le) || e instanceof UnsupportedOperationByServerException) {
      return false;
    }
    return le.isOutcomeUnknown() || le.httpStatus() >= 500;
  }

  /** Logs what the re-read decided, so an operator can follow a reconciled statement. */
  static void reconciled(String what, List<String> id, String decision, RuntimeException e) {
    LOG.warn("{} {}: the server's answer was lost or failed ({}); re-read: {}", what,
        Identifiers.display(id), e.getClass().getSimpleName(), decision);
  }
}
