package io.lancerest.spark.mv.udtf;

/**
 * What happened to one partition, sent from a task to the driver.
 *
 * @param fragments {@link io.lancerest.spark.mv.commit.FragmentShipping#toBytes} of the
 *     partition's new fragments ({@link Status#DONE}); empty otherwise
 * @param calls UDTF calls made for it in this run (0 when reused)
 */
record PartitionOutcome(String keyId, String keyDisplay, Status status, byte[] fragments,
    long rows, int calls, String errorClass, String errorMessage)
    implements java.io.Serializable {

  /** DONE: computed in this run; REUSED: taken from a checkpoint of an earlier failed run. */
  enum Status { DONE, REUSED, SKIPPED, FAILED }

  static PartitionOutcome done(String id, String display, byte[] fragments, long rows,
      int calls) {
    return new PartitionOutcome(id, display, Status.DONE, fragments, rows, calls, null, null);
  }

  static PartitionOutcome reused(String id, String display) {
    return new PartitionOutcome(id, display, Status.REUSED, new byte[0], 0, 0, null, null);
  }

  static PartitionOutcome failed(Status status, String id, String display, int calls,
      Throwable error) {
    return new PartitionOutcome(id, display, status, new byte[0], 0, calls,
        error.getClass().getName(), String.valueOf(error.getMessage()));
  }
}
