package io.lancerest.spark.computed;

import java.io.Serializable;
import org.lance.fragment.DataFile;

/**
 * What a task wrote for one fragment.
 *
 * @param fragmentId the fragment
 * @param file the new data file holding only the column, or {@code null} when no row needed it
 * @param rowsComputed rows computed
 * @param rowsSkipped rows left NULL by {@code error_handling = skip}
 * @param complete every row of the fragment now holds its value (no {@code where} held rows back)
 */
public record FragmentResult(int fragmentId, DataFile file, long rowsComputed, long rowsSkipped,
    boolean complete) implements Serializable {}
