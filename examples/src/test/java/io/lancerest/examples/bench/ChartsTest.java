package io.lancerest.examples.bench;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.awt.image.BufferedImage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.knowm.xchart.CategoryChart;

/** {@link Charts} writes readable PNGs of its fixed size without a display. */
class ChartsTest {
  @TempDir
  Path dir;

  @Test
  void writesPngsOfTheFixedSize() throws Exception {
    Charts charts = Charts.of(Map.of("charts", dir.toString()));
    charts.refreshBySize("sweep", "A sweep", "rows changed", true, List.of(
        new ViewBench.SweepPoint(550, 0.11, 2.4), new ViewBench.SweepPoint(5500, 0.13, 2.5),
        new ViewBench.SweepPoint(55000, 0.4, 2.6)), "test run");
    CategoryChart bars = Charts.bars("statement", "median latency (ms)");
    bars.addSeries("ours", List.of("a", "b"), List.of(30.0, 2500.0));
    bars.addSeries("peer", List.of("a", "b"), List.of(77.0, 2800.0));
    Path written = charts.write("bars", bars, "Bars", "test run");

    assertEquals(dir.resolve("bars.png"), written);
    for (String name : List.of("sweep", "bars")) {
      Path png = dir.resolve(name + ".png");
      byte[] head = Arrays.copyOf(Files.readAllBytes(png), 8);
      assertArrayEquals(new byte[] {(byte) 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'}, head);
      BufferedImage img = ImageIO.read(png.toFile());
      assertEquals(Charts.WIDTH, img.getWidth());
      assertEquals(Charts.HEIGHT, img.getHeight());
      assertTrue(Files.size(png) < 150_000, name + ": " + Files.size(png) + " bytes");
    }
  }

  @Test
  void chartsNoneWritesNothing() throws Exception {
    Charts charts = Charts.of(Map.of("charts", "none"));
    assertFalse(charts.on());
    assertNull(charts.write("x", Charts.xy("x", "y"), "X", "run"));
  }

  @Test
  void repositoryRootIsFoundAboveAModule() throws Exception {
    Path root = dir.resolve("repo");
    Path module = Files.createDirectories(root.resolve("examples"));
    Files.writeString(root.resolve("pom.xml"), "<project/>");
    Files.writeString(module.resolve("pom.xml"), "<project/>");
    assertEquals(root, Charts.repositoryRoot(module), "the topmost pom.xml");
    Files.writeString(root.resolve(".git"), "gitdir: elsewhere");
    assertEquals(root, Charts.repositoryRoot(module), "a worktree's .git file");
  }
}
