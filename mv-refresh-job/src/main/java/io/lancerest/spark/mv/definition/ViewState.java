package io.lancerest.spark.mv.definition;

/**
 * Refresh state stored next to the definition on the view table.
 *
 * @param watermark the source version the view was last refreshed to (incremental kinds), or
 *     {@code null} before the first refresh
 * @param baseTableVersion the source version the content reflects (all kinds), or {@code null}
 * @param lastJob JSON of the last refresh job (id, status, counts), or {@code null}
 */
public record ViewState(Long watermark, Long baseTableVersion, String lastJob) {
  public static final ViewState NEVER_REFRESHED = new ViewState(null, null, null);
}
