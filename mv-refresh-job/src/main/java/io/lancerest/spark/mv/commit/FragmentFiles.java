package io.lancerest.spark.mv.commit;

import io.lancerest.spark.connector.LanceLocation;
import java.util.Collection;
import org.apache.arrow.memory.BufferAllocator;
import org.lance.FragmentMetadata;
import org.lance.file.LanceFileReader;
import org.lance.fragment.DataFile;

/**
 * Whether the data files of fragments written earlier are still in a table's store: a fragment
 * kept aside to be committed again later (a resume checkpoint) is not protected by the table's
 * versions once a cleanup of older versions ran.
 */
public final class FragmentFiles {
  private FragmentFiles() {}

  /**
   * The first data file of {@code fragments} that cannot be opened under {@code table}'s
   * location (with its credentials as they are now), or {@code null} when all can. Opening
   * reads a file's footer: it is there and whole.
   */
  public static String firstMissing(LanceLocation table, BufferAllocator a,
      Collection<FragmentMetadata> fragments) {
    String uri = table.uri();
    String data = (uri.endsWith("/") ? uri : uri + "/") + "data/";
    for (FragmentMetadata f : fragments) {
      for (DataFile file : f.getFiles()) {
        LanceFileReader r;
        try {
          r = LanceFileReader.open(data + file.getPath(), table.current(), a);
        } catch (java.io.IOException | RuntimeException e) {
          return file.getPath() + " (" + e + ")";
        }
        try {
          r.close();
        } catch (Exception closing) {
          // opened, so it is there; a failure to release the reader does not matter here
        }
      }
    }
    return null;
  }
}
