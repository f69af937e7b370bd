package io.lancerest.spark.mv.commit;

import io.lancerest.spark.connector.LanceLocation;

/** lance-core's error messages as a user may read them: no credentials, no Rust source position. */
final class LanceErrors {
  private LanceErrors() {}

  static String message(Exception e) {
    return LanceLocation.withoutUserInfo(String.valueOf(e.getMessage()))
        .replaceFirst(",\\s*\\S+\\.rs:\\d+:\\d+\\s*$", "");
  }
}
