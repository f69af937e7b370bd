package io.lancerest.spark.connector;

import java.util.Optional;
import org.apache.arrow.vector.types.DateUnit;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.DecimalType;

/**
 * Target types for {@code ColumnAlteration.castTo} that lance-core 4.0.0 actually understands.
 *
 * <p>Its JNI layer reads the Java {@link ArrowType} through {@code toString()} and parses the
 * result as an arrow-rs {@code DataType} name, silently dropping the cast when that fails. Java's
 * names ({@code "Int(64, true)"}) never parse, so {@code castTo(new ArrowType.Int(64, true))}
 * commits a version with the type unchanged. These subclasses keep the Java type and answer
 * {@code toString()} with the arrow-rs name ({@code "Int64"}).
 */
final class CastTypes {

  private CastTypes() {}

  /** The cast target for a Spark type, or empty when lance-core cannot be asked for it. */
  static Optional<ArrowType> forSparkType(DataType type) {
    if (type.equals(DataTypes.ByteType)) {
      return Optional.of(integer(8, "Int8"));
    } else if (type.equals(DataTypes.ShortType)) {
      return Optional.of(integer(16, "Int16"));
    } else if (type.equals(DataTypes.IntegerType)) {
      return Optional.of(integer(32, "Int32"));
    } else if (type.equals(DataTypes.LongType)) {
      return Optional.of(integer(64, "Int64"));
    } else if (type.equals(DataTypes.FloatType)) {
      return Optional.of(floating(FloatingPointPrecision.SINGLE, "Float32"));
    } else if (type.equals(DataTypes.DoubleType)) {
      return Optional.of(floating(FloatingPointPrecision.DOUBLE, "Float64"));
    } else if (type.equals(DataTypes.StringType)) {
      return Optional.of(
          new ArrowType.Utf8() {
            @Override
            public String toString() {
              return "Utf8";
            }
          });
    } else if (type.equals(DataTypes.BinaryType)) {
      return Optional.of(
          new ArrowType.Binary() {
            @Override
            public String toString() {
              return "Binary";
            }
          });
    } else if (type.equals(DataTypes.BooleanType)) {
      return Optional.of(
          new ArrowType.Bool() {
            @Override
            public String toString() {
              return "Boolean";
            }
          });
    } else if (type.equals(DataTypes.DateType)) {
      return Optional.of(
          new ArrowType.Date(DateUnit.DAY) {
            @Override
            public String toString() {
              return "Date32";
            }
          });
    } else if (type instanceof DecimalType decimal) {
      String name = "Decimal128(" + decimal.precision() + ", " + decimal.scale() + ")";
      return Optional.of(
          new ArrowType.Decimal(decimal.precision(), decimal.scale(), 128) {
            @Override
            public String toString() {
              return name;
            }
          });
    }
    return Optional.empty();
  }

  private static ArrowType integer(int bits, String name) {
    return new ArrowType.Int(bits, true) {
      @Override
      public String toString() {
        return name;
      }
    };
  }

  private static ArrowType floating(FloatingPointPrecision precision, String name) {
    return new ArrowType.FloatingPoint(precision) {
      @Override
      public String toString() {
        return name;
      }
    };
  }
}
