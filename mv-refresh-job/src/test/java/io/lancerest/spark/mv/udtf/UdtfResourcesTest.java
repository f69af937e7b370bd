package io.lancerest.spark.mv.udtf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.spark.resource.ResourceProfile;
import org.junit.jupiter.api.Test;

/** Resource requests: 64-bit memory sizes and the stage-level profile they become. */
class UdtfResourcesTest {
  @Test
  void memoryOfTwoGibAndMoreDoesNotOverflow() {
    assertEquals(3_221_225_472L, UdtfResources.parseMemory("3GiB"));
    assertEquals(8_589_934_592L, UdtfResources.parseMemory("8 GiB"));
    assertEquals(8_589_934_592L, UdtfResources.parseMemory("8g"));
    assertEquals(2_147_483_648L, UdtfResources.parseMemory("2147483648"));
    assertEquals(1_610_612_736L, UdtfResources.parseMemory("1.5gb"));
    assertEquals(536_870_912L, UdtfResources.parseMemory("512MiB"));
  }

  @Test
  void memoryThatIsNotASizeIsRefused() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> UdtfResources.parseMemory("lots"));
    assertEquals("memory 'lots' is not a size; use bytes or a number with a unit such as "
        + "512MiB, 3GiB or 8g", e.getMessage());
  }

  @Test
  void requestsBecomeAStageLevelProfileWithMemoryInMib() {
    ResourceProfile p = UdtfResources.of("2", "0.5", "8GiB").toResourceProfile("/gpu.sh")
        .orElseThrow();

    assertEquals(8192L, p.executorResources().get("memory").get().amount());
    assertEquals(2L, p.executorResources().get("cores").get().amount());
    assertEquals(1L, p.executorResources().get("gpu").get().amount());
    assertEquals(2.0, p.taskResources().get("cpus").get().amount());
    assertEquals(0.5, p.taskResources().get("gpu").get().amount());
  }

  @Test
  void threeGibIsKeptExactlyInMib() {
    UdtfResources r = UdtfResources.of(null, null, "3GiB");
    assertEquals(3_221_225_472L, r.memoryBytes());
    assertEquals(3072L, r.memoryMib().orElseThrow());
    assertTrue(r.toResourceProfile("").isPresent());
  }

  @Test
  void nothingRequestedMeansNoProfile() {
    assertTrue(UdtfResources.NONE.toResourceProfile("").isEmpty());
    assertTrue(new UdtfResources(0.0, 0.0, 0L).toResourceProfile("").isEmpty());
  }
}
