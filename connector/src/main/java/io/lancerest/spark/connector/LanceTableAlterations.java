package io.lancerest.spark.connector;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Consumer;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.spark.sql.connector.catalog.TableChange;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.LanceArrowUtils;
import org.lance.Dataset;
import org.lance.schema.ColumnAlteration;

/**
 * Table properties and column changes applied to the Lance dataset itself: the fallback for
 * namespace servers that cannot store properties or evolve schemas.
 *
 * <p>Each change is its own dataset commit. Tables with managed versioning are refused: a direct
 * commit would bypass the namespace that decides which version is current.
 */
public final class LanceTableAlterations {

  private static final String ARROW_TIME_ZONE = "UTC";

  private LanceTableAlterations() {}

  // ---------------------------------------------------------------- properties

  /** The dataset config of the table's latest version (includes Lance's own {@code lance.*}). */
  public static Map<String, String> properties(TableHandle handle) {
    try (Dataset ds = DatasetOpener.openAt(handle.withVersion(null), null)) {
      return new LinkedHashMap<>(ds.getConfig());
    }
  }

  /** Upserts keys in the dataset config. */
  public static void setProperties(TableHandle handle, Map<String, String> properties) {
    if (properties == null || properties.isEmpty()) {
      return;
    }
    apply(
        handle,
        "set table properties",
        ds -> {
          // lance-core 4.0.0's updateConfig replaces the whole config, so merge first.
          Map<String, String> merged = new LinkedHashMap<>(ds.getConfig());
          merged.putAll(properties);
          ds.updateConfig(merged);
        });
  }

  /** Removes keys from the dataset config; absent keys are ignored. */
  public static void unsetProperties(TableHandle handle, Set<String> keys) {
    if (keys == null || keys.isEmpty()) {
      return;
    }
    apply(handle, "unset table properties", ds -> ds.deleteConfigKeys(keys));
  }

  // ---------------------------------------------------------------- columns

  /**
   * Adds columns, all-null for existing rows, so they must be nullable. Top-level only, which is
   * what lance-core's {@code addColumns(List<Field>)} supports.
   */
  public static void addColumns(TableHandle handle, List<StructField> columns) {
    if (columns == null || columns.isEmpty()) {
      return;
    }
    List<Field> fields = new ArrayList<>(columns.size());
    for (StructField column : columns) {
      if (!column.nullable()) {
        throw invalid(
            handle,
            "Cannot add column "
                + column.name()
                + " as NOT NULL: existing rows have no value for it. Add it as nullable.");
      }
      fields.add(toArrowField(column.name(), column.dataType(), column.metadata()));
    }
    apply(handle, "add columns", ds -> ds.addColumns(fields));
  }

  /** Drops columns given as dotted paths ({@code a.b} for nested fields). */
  public static void dropColumns(TableHandle handle, List<String> columnPaths) {
    if (columnPaths == null || columnPaths.isEmpty()) {
      return;
    }
    apply(handle, "drop columns", ds -> ds.dropColumns(List.copyOf(columnPaths)));
  }

  /** Renames the field at {@code fieldNames} (its last part changes to {@code newName}). */
  public static void renameColumn(TableHandle handle, String[] fieldNames, String newName) {
    Objects.requireNonNull(newName, "newName");
    alter(handle, "rename column", new ColumnAlteration.Builder(path(fieldNames)).rename(newName));
  }

  /**
   * Casts a column to a new primitive type (numbers, string, binary, boolean, date, decimal);
   * lance-core rewrites the column and decides which casts are possible. The result is checked
   * because lance-core drops casts it cannot parse without an error.
   */
  public static void alterColumnType(TableHandle handle, String[] fieldNames, DataType newType) {
    String column = path(fieldNames);
    ArrowType target =
        CastTypes.forSparkType(newType)
            .orElseThrow(
                () ->
                    invalid(
                        handle,
                        "Cannot change column "
                            + column
                            + " of table "
                            + handle.displayName()
                            + " to "
                            + newType.simpleString()
                            + ": lance-core 4.0.0 casts only to numeric, string, binary, boolean,"
                            + " date and decimal types."));
    alter(handle, "change column type", new ColumnAlteration.Builder(column).castTo(target));
    DataType actual = columnType(handle, fieldNames);
    if (!newType.equals(actual)) {
      throw new LanceTableException(
          LanceTableException.Reason.OPERATION_FAILED,
          handle.displayName(),
          "Lance did not change column "
              + column
              + " of table "
              + handle.displayName()
              + " to "
              + newType.simpleString()
              + " (it is still "
              + (actual == null ? "missing" : actual.simpleString())
              + ").");
    }
  }

  /** Makes a column nullable. The reverse is refused: existing rows may hold nulls. */
  public static void dropNotNull(TableHandle handle, String[] fieldNames) {
    alter(handle, "drop NOT NULL", new ColumnAlteration.Builder(path(fieldNames)).nullable(true));
  }

  /**
   * Applies Spark {@code ALTER TABLE} changes in order: properties, add / drop / rename column,
   * column type, and making a column nullable. Everything else is refused before anything is
   * changed, naming the change.
   */
  public static void alterTable(TableHandle handle, TableChange... changes) {
    for (TableChange change : changes) {
      if (!isSupported(change)) {
        throw invalid(
            handle,
            "Cannot apply "
                + describe(change)
                + " to table "
                + handle.displayName()
                + ": the Lance dataset supports properties, adding nullable columns, dropping,"
                + " renaming, changing type and dropping NOT NULL.");
      }
    }
    for (TableChange change : changes) {
      if (change instanceof TableChange.SetProperty set) {
        setProperties(handle, Map.of(set.property(), set.value()));
      } else if (change instanceof TableChange.RemoveProperty remove) {
        unsetProperties(handle, Set.of(remove.property()));
      } else if (change instanceof TableChange.AddColumn add) {
        addColumns(
            handle,
            List.of(new StructField(add.fieldNames()[0], add.dataType(), add.isNullable(), Metadata.empty())));
      } else if (change instanceof TableChange.DeleteColumn delete) {
        if (Boolean.TRUE.equals(delete.ifExists()) && !hasColumn(handle, delete.fieldNames())) {
          continue;
        }
        dropColumns(handle, List.of(path(delete.fieldNames())));
      } else if (change instanceof TableChange.RenameColumn rename) {
        renameColumn(handle, rename.fieldNames(), rename.newName());
      } else if (change instanceof TableChange.UpdateColumnType update) {
        alterColumnType(handle, update.fieldNames(), update.newDataType());
      } else if (change instanceof TableChange.UpdateColumnNullability nullability) {
        dropNotNull(handle, nullability.fieldNames());
      }
    }
  }

  // ---------------------------------------------------------------- internals

  static void requireUnmanaged(TableHandle handle, String operation) {
    if (handle.managedVersioning()) {
      throw new ManagedVersioningException(handle.displayName(), operation);
    }
  }

  private static boolean isSupported(TableChange change) {
    if (change instanceof TableChange.AddColumn add) {
      return add.fieldNames().length == 1 && add.position() == null && add.defaultValue() == null;
    }
    if (change instanceof TableChange.UpdateColumnNullability nullability) {
      return nullability.nullable();
    }
    return change instanceof TableChange.SetProperty
        || change instanceof TableChange.RemoveProperty
        || change instanceof TableChange.DeleteColumn
        || change instanceof TableChange.RenameColumn
        || change instanceof TableChange.UpdateColumnType;
  }

  private static String describe(TableChange change) {
    if (change instanceof TableChange.ColumnChange column) {
      return change.getClass().getSimpleName() + " on column " + String.join(".", column.fieldNames());
    }
    return change.getClass().getSimpleName();
  }

  private static DataType columnType(TableHandle handle, String[] fieldNames) {
    try (Dataset ds = DatasetOpener.openAt(handle.withVersion(null), null)) {
      DataType type = LanceArrowUtils.fromArrowSchema(ds.getSchema());
      for (String name : fieldNames) {
        if (!(type instanceof StructType struct) || !Arrays.asList(struct.fieldNames()).contains(name)) {
          return null;
        }
        type = struct.apply(name).dataType();
      }
      return type;
    }
  }

  private static boolean hasColumn(TableHandle handle, String[] fieldNames) {
    try (Dataset ds = DatasetOpener.openAt(handle.withVersion(null), null)) {
      List<Field> fields = ds.getSchema().getFields();
      Field found = null;
      for (String name : fieldNames) {
        found = fields.stream().filter(f -> f.getName().equals(name)).findFirst().orElse(null);
        if (found == null) {
          return false;
        }
        fields = found.getChildren();
      }
      return true;
    }
  }

  private static void alter(TableHandle handle, String operation, ColumnAlteration.Builder change) {
    ColumnAlteration alteration = change.build();
    apply(handle, operation, ds -> ds.alterColumns(List.of(alteration)));
  }

  private static void apply(TableHandle handle, String operation, Consumer<Dataset> change) {
    requireUnmanaged(handle, operation);
    try (Dataset ds = DatasetOpener.openAt(handle.withVersion(null), null)) {
      change.accept(ds);
    } catch (LanceTableException | ManagedVersioningException e) {
      throw e;
    } catch (RuntimeException e) {
      throw new LanceTableException(
          e instanceof IllegalArgumentException
              ? LanceTableException.Reason.INVALID_CHANGE
              : LanceTableException.Reason.OPERATION_FAILED,
          handle.displayName(),
          "Cannot " + operation + " on table " + handle.displayName() + ": " + e.getMessage(),
          e);
    }
  }

  private static LanceTableException invalid(TableHandle handle, String message) {
    return new LanceTableException(
        LanceTableException.Reason.INVALID_CHANGE, handle.displayName(), message);
  }

  private static String path(String[] fieldNames) {
    if (fieldNames == null || fieldNames.length == 0) {
      throw new IllegalArgumentException("A column path needs at least one field name");
    }
    return String.join(".", Arrays.asList(fieldNames));
  }

  private static Field toArrowField(String name, DataType type, Metadata metadata) {
    return LanceArrowUtils.toArrowField(name, type, true, ARROW_TIME_ZONE, metadata);
  }
}
