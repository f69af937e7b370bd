package io.lancerest.spark.mv.udtf;

import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.spark.resource.ExecutorResourceRequests;
import org.apache.spark.resource.ResourceProfile;
import org.apache.spark.resource.ResourceProfileBuilder;
import org.apache.spark.resource.TaskResourceRequests;

/**
 * Per-worker resource requests of a UDTF ({@code num_cpus}, {@code num_gpus}, {@code memory}),
 * turned into a Spark stage-level scheduling {@link ResourceProfile}.
 *
 * <p>{@code memory} is kept in bytes as a {@code long}: the reference implementation's 32-bit
 * field overflows at 2 GiB. Spark's executor memory request is in MiB.
 *
 * @param numCpus cores per task; Spark schedules whole cores, so a fraction is rounded up
 * @param numGpus GPUs per task; fractions share a GPU between tasks, as Spark allows
 * @param memoryBytes executor memory; {@code null} when not requested
 */
public record UdtfResources(Double numCpus, Double numGpus, Long memoryBytes)
    implements java.io.Serializable {
  private static final Pattern MEMORY =
      Pattern.compile("\\s*(\\d+(?:\\.\\d+)?)\\s*([kmgtp]?)(i?b?)\\s*", Pattern.CASE_INSENSITIVE);

  public static final UdtfResources NONE = new UdtfResources(null, null, null);

  public UdtfResources {
    if (numCpus != null && !(numCpus >= 0)) {
      throw new IllegalArgumentException("num_cpus must be >= 0, got " + numCpus);
    }
    if (numGpus != null && !(numGpus >= 0)) {
      throw new IllegalArgumentException("num_gpus must be >= 0, got " + numGpus);
    }
    if (memoryBytes != null && memoryBytes < 0) {
      throw new IllegalArgumentException("memory must be >= 0 bytes, got " + memoryBytes);
    }
  }

  /** The requests of a verified function spec (0 means "not requested"). */
  public static UdtfResources of(io.lancerest.spark.mv.definition.FunctionSpec spec) {
    return new UdtfResources(spec.numCpus(), spec.numGpus(), spec.memory());
  }

  /** Builds from the envelope's strings; {@code memory} accepts bytes or "3GiB", "512m", .... */
  public static UdtfResources of(String numCpus, String numGpus, String memory) {
    return new UdtfResources(number("num_cpus", numCpus), number("num_gpus", numGpus),
        memory == null || memory.isBlank() ? null : parseMemory(memory));
  }

  private static Double number(String name, String v) {
    if (v == null || v.isBlank()) {
      return null;
    }
    try {
      return Double.parseDouble(v.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(name + " must be a number, got '" + v + "'");
    }
  }

  /**
   * Parses a memory size: a plain number is bytes; suffixes k/m/g/t/p (with optional "i" and
   * "b", any case) are binary multiples, as in Spark's own size strings.
   */
  public static long parseMemory(String text) {
    Matcher m = MEMORY.matcher(text);
    if (!m.matches()) {
      throw new IllegalArgumentException("memory '" + text + "' is not a size; use bytes or a "
          + "number with a unit such as 512MiB, 3GiB or 8g");
    }
    int shift = switch (m.group(2).toLowerCase(Locale.ROOT)) {
      case "" -> 0;
      case "k" -> 10;
      case "m" -> 20;
      case "g" -> 30;
      case "t" -> 40;
      default -> 50;
    };
    java.math.BigDecimal bytes = new java.math.BigDecimal(m.group(1))
        .multiply(java.math.BigDecimal.valueOf(2).pow(shift));
    if (bytes.compareTo(java.math.BigDecimal.valueOf(Long.MAX_VALUE)) > 0) {
      throw new IllegalArgumentException("memory '" + text + "' is too large");
    }
    return bytes.setScale(0, java.math.RoundingMode.CEILING).longValueExact();
  }

  public boolean requested() {
    return (numCpus != null && numCpus > 0) || (numGpus != null && numGpus > 0)
        || (memoryBytes != null && memoryBytes > 0);
  }

  /** Executor memory in MiB, rounded up (Spark's unit for stage-level memory requests). */
  public Optional<Long> memoryMib() {
    return Optional.ofNullable(memoryBytes).filter(b -> b > 0)
        .map(b -> (b + (1L << 20) - 1) >>> 20);
  }

  /**
   * The stage-level profile for these requests, or empty when nothing is requested.
   *
   * @param gpuDiscoveryScript the executor GPU discovery script (Spark requires one for GPU
   *     requests); may be empty
   */
  public Optional<ResourceProfile> toResourceProfile(String gpuDiscoveryScript) {
    if (!requested()) {
      return Optional.empty();
    }
    TaskResourceRequests task = new TaskResourceRequests();
    ExecutorResourceRequests executor = new ExecutorResourceRequests();
    int cores = numCpus == null || numCpus == 0 ? 1 : (int) Math.ceil(numCpus);
    task.cpus(cores);
    executor.cores(cores);
    if (numGpus != null && numGpus > 0) {
      task.resource("gpu", numGpus);
      executor.resource("gpu", (long) Math.ceil(numGpus),
          gpuDiscoveryScript == null ? "" : gpuDiscoveryScript, "");
    }
    memoryMib().ifPresent(mib -> executor.memory(mib + "m"));
    return Optional.of(new ResourceProfileBuilder().require(executor).require(task).build());
  }
}
