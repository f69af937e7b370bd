package io.lancerest.examples.bench;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Map;
import javax.imageio.ImageIO;
import org.knowm.xchart.AnnotationText;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.internal.chartpart.Chart;
import org.knowm.xchart.style.AxesChartStyler;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.lines.SeriesLines;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * The benchmarks' PNG charts (XChart, no display needed): {@value #WIDTH} × {@value #HEIGHT}
 * pixels, a title and a two-line subtitle drawn above the plot: what was run, then the machine's
 * cores ("shared with other work" when the load at the start was above their number), its
 * 1-minute load average when the benchmark started and when the chart was written, and the date
 * (UTC).
 *
 * <p>Argument {@code charts=DIR} picks the folder (a relative one is taken from the repository
 * root, not from Maven's {@code examples/} working directory); {@code charts=none} writes no
 * chart. Default: {@code docs/img} of the repository.
 */
final class Charts {
  static {
    // First, before any AWT class (Color included) initialises: no display where these run.
    System.setProperty("java.awt.headless", "true");
  }

  static final int WIDTH = 800;
  static final int HEIGHT = 500;
  private static final int HEADER = 66;
  private static final String FAMILY = Font.SANS_SERIF;
  static final Color OURS = new Color(0x1f, 0x77, 0xb4);
  static final Color PEER = new Color(0xd6, 0x62, 0x1e);
  static final Color THIRD = new Color(0x2c, 0xa0, 0x2c);

  private final Path dir;
  private final double loadAtStart;

  private Charts(Path dir) {
    this.dir = dir;
    this.loadAtStart = ViewBench.load1();
  }

  /** From the {@code charts} argument (see the class comment); call it when the run starts. */
  static Charts of(Map<String, String> args) {
    String v = args.getOrDefault("charts", "docs/img");
    if (v.equals("none")) {
      return new Charts(null);
    }
    String maven = System.getProperty("maven.multiModuleProjectDirectory", "");
    Path root = !maven.isBlank() && Files.isDirectory(Path.of(maven))
        ? Path.of(maven).toAbsolutePath() : repositoryRoot(Path.of("").toAbsolutePath());
    return new Charts(root.resolve(v).normalize());
  }

  /** Whether charts are written at all ({@code charts=none}: no). */
  boolean on() {
    return dir != null;
  }

  /**
   * The repository's root (when the JVM was not given Maven's {@code
   * maven.multiModuleProjectDirectory}): the nearest directory from {@code from} upwards holding
   * {@code .git} (a directory, or a file in a worktree), else the topmost of the directories
   * holding a {@code pom.xml} from {@code from} upwards; {@code from} itself when none does.
   */
  static Path repositoryRoot(Path from) {
    Path topPom = null;
    for (Path d = from; d != null; d = d.getParent()) {
      if (Files.exists(d.resolve(".git"))) {
        return d;
      }
      if (Files.isRegularFile(d.resolve("pom.xml"))) {
        topPom = d;
      } else if (topPom != null) {
        break;
      }
    }
    return topPom != null ? topPom : from;
  }

  /** A line chart with this class's fonts and colours (title and subtitle come with write). */
  static XYChart xy(String xTitle, String yTitle) {
    XYChart c = new XYChart(WIDTH, HEIGHT - HEADER);
    c.setXAxisTitle(xTitle);
    c.setYAxisTitle(yTitle);
    style(c.getStyler());
    c.getStyler().setMarkerSize(9);
    return c;
  }

  /** A grouped bar chart with this class's fonts and colours. */
  static CategoryChart bars(String xTitle, String yTitle) {
    CategoryChart c = new CategoryChart(WIDTH, HEIGHT - HEADER);
    c.setXAxisTitle(xTitle);
    c.setYAxisTitle(yTitle);
    style(c.getStyler());
    c.getStyler().setLabelsVisible(true);
    c.getStyler().setLabelsFont(new Font(FAMILY, Font.PLAIN, 13));
    c.getStyler().setLabelsPosition(1.0);
    c.getStyler().setLabelsFontColorAutomaticEnabled(false);
    c.getStyler().setLabelsFontColor(Color.BLACK);
    c.getStyler().setAvailableSpaceFill(0.8);
    return c;
  }

  private static void style(AxesChartStyler s) {
    s.setChartTitleVisible(false);
    s.setChartBackgroundColor(Color.WHITE);
    s.setPlotBackgroundColor(Color.WHITE);
    s.setPlotBorderColor(Color.GRAY);
    s.setPlotGridLinesColor(new Color(0xdd, 0xdd, 0xdd));
    s.setAxisTitleFont(new Font(FAMILY, Font.PLAIN, 14));
    s.setAxisTickLabelsFont(new Font(FAMILY, Font.PLAIN, 12));
    s.setLegendFont(new Font(FAMILY, Font.PLAIN, 13));
    s.setLegendPosition(Styler.LegendPosition.InsideNW);
    s.setLegendBorderColor(Color.LIGHT_GRAY);
    s.setSeriesColors(new Color[] {OURS, PEER, THIRD, Color.DARK_GRAY});
    s.setChartPadding(12);
    s.setAntiAlias(true);
  }

  /** Adds a line series with markers in {@code color}, dashed when {@code dashed}. */
  static XYSeries line(XYChart c, String name, double[] x, double[] y, Color color,
      boolean dashed) {
    XYSeries s = c.addSeries(name, x, y);
    s.setXYSeriesRenderStyle(XYSeries.XYSeriesRenderStyle.Line);
    s.setLineColor(color);
    s.setMarkerColor(color);
    s.setLineStyle(dashed ? SeriesLines.DASH_DASH : SeriesLines.SOLID);
    s.setMarker(dashed ? SeriesMarkers.SQUARE : SeriesMarkers.CIRCLE);
    return s;
  }

  /** Adds a vertical line at {@code x} from {@code y0} to {@code y1}, named in the legend. */
  static void vertical(XYChart c, String name, double x, double y0, double y1, Color color,
      BasicStroke stroke) {
    XYSeries s = c.addSeries(name, new double[] {x, x}, new double[] {y0, y1});
    s.setXYSeriesRenderStyle(XYSeries.XYSeriesRenderStyle.Line);
    s.setMarker(SeriesMarkers.NONE);
    s.setLineColor(color);
    s.setLineStyle(stroke);
  }

  /**
   * Refresh time against the size of the change ({@link ViewBench#sweep}): the REFRESH after
   * the change and the forced full refresh of the same source version, one point per size, each
   * labelled with its time (the incremental one also with its share of the full refresh). A log
   * x axis when {@code logX}; the time axis is linear from 0.
   */
  void refreshBySize(String name, String title, String xTitle, boolean logX,
      List<ViewBench.SweepPoint> points, String run) {
    if (!on() || points.isEmpty()) {
      return;
    }
    XYChart c = xy(xTitle, "refresh time (s)");
    double[] x = points.stream().mapToDouble(ViewBench.SweepPoint::size).toArray();
    double[] inc = points.stream().mapToDouble(ViewBench.SweepPoint::incremental).toArray();
    double[] full = points.stream().mapToDouble(ViewBench.SweepPoint::full).toArray();
    line(c, "REFRESH after the change (median; label: time, share of the full refresh)", x,
        inc, OURS, false);
    line(c, "REFRESH WITH (force = true): full rebuild, same source version", x, full, PEER,
        true);
    c.getStyler().setLegendPosition(Styler.LegendPosition.OutsideS);
    c.getStyler().setAnnotationTextFont(new Font(FAMILY, Font.PLAIN, 13));
    c.getStyler().setAnnotationTextFontColor(Color.BLACK);
    c.getStyler().setXAxisLogarithmic(logX);
    c.getStyler().setXAxisDecimalPattern("#,##0");
    if (logX) {
      c.getStyler().setXAxisMin(x[0] / 2);
      c.getStyler().setXAxisMax(x[x.length - 1] * 2);
    }
    double max = 0;
    for (int i = 0; i < x.length; i++) {
      max = Math.max(max, Math.max(inc[i], full[i]));
    }
    c.getStyler().setYAxisMin(0.0);
    c.getStyler().setYAxisMax(max * 1.2);
    double gap = max * 0.06;
    for (int i = 0; i < x.length; i++) {
      // above its point; the lower of two close points has its label below instead
      boolean close = Math.abs(inc[i] - full[i]) < 2 * gap;
      double incAt = inc[i] + (close && inc[i] <= full[i] ? -gap : gap);
      double fullAt = full[i] + (close && full[i] < inc[i] ? -gap : gap);
      c.addAnnotation(new AnnotationText(String.format(java.util.Locale.ROOT, "%.2f s, %.0f %%", inc[i],
          100 * inc[i] / full[i]), x[i], incAt, false));
      c.addAnnotation(new AnnotationText(String.format(java.util.Locale.ROOT, "%.2f s", full[i]), x[i], fullAt,
          false));
    }
    tryWrite(name, c, title, run);
  }

  /**
   * Writes {@code chart} to {@code NAME.png} under the chart folder with a title above it and a
   * subtitle of {@code run} (what was run) and the machine line. Returns the file, or null when
   * charts are off.
   */
  Path write(String name, Chart<?, ?> chart, String title, String run) throws IOException {
    if (!on()) {
      return null;
    }
    Files.createDirectories(dir);
    Path file = dir.resolve(name + ".png");
    ImageIO.write(render(chart, title, List.of(run, machine())), "png", file.toFile());
    System.out.printf("chart: %s%n", file);
    return file;
  }

  /** As {@link #write}, printing a failure instead of throwing: a chart never fails a run. */
  void tryWrite(String name, Chart<?, ?> chart, String title, String run) {
    try {
      write(name, chart, title, run);
    } catch (IOException | RuntimeException e) {
      System.out.printf("chart %s not written: %s%n", name, e);
    }
  }

  /** The machine line of the subtitle. */
  String machine() {
    int cores = Runtime.getRuntime().availableProcessors();
    return String.format(java.util.Locale.ROOT, "%d cores%s, 1-min load %.1f at start, %.1f now; %s", cores,
        loadAtStart > cores ? " shared with other work" : "", loadAtStart, ViewBench.load1(),
        ZonedDateTime.now(ZoneOffset.UTC).format(DateTimeFormatter.ofPattern(
            "yyyy-MM-dd HH:mm 'UTC'")));
  }

  /** The chart under a header of a bold title and one smaller line per subtitle entry. */
  static BufferedImage render(Chart<?, ?> chart, String title, List<String> subtitle) {
    BufferedImage img = new BufferedImage(WIDTH, HEIGHT, BufferedImage.TYPE_INT_RGB);
    Graphics2D g = img.createGraphics();
    try {
      g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
      g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING,
          RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
      g.setColor(Color.WHITE);
      g.fillRect(0, 0, WIDTH, HEIGHT);
      g.setColor(Color.BLACK);
      g.setFont(new Font(FAMILY, Font.BOLD, 17));
      g.drawString(title, 14, 24);
      g.setColor(Color.DARK_GRAY);
      int y = 43;
      for (String line : subtitle) {
        // a line too long for the width is set smaller, down to 9 points
        int size = 12;
        g.setFont(new Font(FAMILY, Font.PLAIN, size));
        while (size > 9 && g.getFontMetrics().stringWidth(line) > WIDTH - 28) {
          g.setFont(new Font(FAMILY, Font.PLAIN, --size));
        }
        g.drawString(line, 14, y);
        y += 16;
      }
      g.translate(0, HEADER);
      chart.paint(g, WIDTH, HEIGHT - HEADER);
    } finally {
      g.dispose();
    }
    return img;
  }
}
