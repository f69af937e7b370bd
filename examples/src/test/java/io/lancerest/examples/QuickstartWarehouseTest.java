package io.lancerest.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code Quickstart --warehouse DIR} empties DIR only when it is new, empty or its own. */
class QuickstartWarehouseTest {
  @TempDir
  Path dir;

  @Test
  void aFolderItDidNotMakeIsNeverDeleted() throws Exception {
    Path checkout = dir.resolve("checkout");
    Files.createDirectories(checkout.resolve("src"));
    Files.writeString(checkout.resolve("pom.xml"), "<project/>");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> Quickstart.resetWarehouse(checkout, true));
    assertEquals("Quickstart: --warehouse " + checkout + " is not empty and was not made by the "
        + "quickstart (no .quickstart-warehouse in it), so it is not deleted; give a new or "
        + "empty folder", e.getMessage());
    assertTrue(Files.exists(checkout.resolve("pom.xml")), "nothing was deleted");
  }

  @Test
  void aNewFolderAndItsOwnAreEmptiedForTheNextRun() throws Exception {
    Path w = dir.resolve("w");
    Quickstart.resetWarehouse(w, true);
    assertTrue(Files.exists(w.resolve(Quickstart.MARKER)));
    Files.writeString(w.resolve("table.lance"), "x");
    Quickstart.resetWarehouse(w, true);
    assertFalse(Files.exists(w.resolve("table.lance")), "its own folder is emptied");
    assertTrue(Files.exists(w.resolve(Quickstart.MARKER)));
  }
}
