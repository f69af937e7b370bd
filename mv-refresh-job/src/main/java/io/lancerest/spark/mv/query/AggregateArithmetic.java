package io.lancerest.spark.mv.query;

import org.apache.spark.sql.Column;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DecimalType;

/**
 * The two operations of an aggregate view's state that Spark SQL expressions would not give
 * exactly as Spark's own aggregates compute them: adding decimal sums, and a decimal average.
 */
final class AggregateArithmetic {
  private AggregateArithmetic() {}

  /**
   * {@code a + b} in the sum's own type. Decimals are added exactly, as Spark's sum adds its
   * buffer: Spark SQL's {@code +} on two decimal(38, s) values would round to decimal(38, s-1)
   * under {@code spark.sql.decimalOperations.allowPrecisionLoss}.
   */
  static Column add(DataType sumType, Column a, Column b) {
    if (sumType instanceof DecimalType d) {
      return functions.udf((org.apache.spark.sql.api.java.UDF2<java.math.BigDecimal,
          java.math.BigDecimal, java.math.BigDecimal>) AggregateArithmetic::exactSum, d).apply(a, b);
    }
    return a.plus(b);
  }

  private static java.math.BigDecimal exactSum(java.math.BigDecimal a, java.math.BigDecimal b) {
    return a == null || b == null ? null : a.add(b);
  }

  /**
   * A decimal average as Spark's {@code avg} computes it from its buffer (its decimal division:
   * to 38 places, half up, then to the result's scale, half up; NULL when it does not fit the
   * result's precision).
   */
  static java.math.BigDecimal decimalAverage(java.math.BigDecimal sum, Long count,
      int precision, int scale) {
    if (sum == null || count == null || count == 0) {
      return null;
    }
    java.math.BigDecimal q = sum.divide(java.math.BigDecimal.valueOf(count), 38,
        java.math.RoundingMode.HALF_UP).setScale(scale, java.math.RoundingMode.HALF_UP);
    return q.precision() > precision ? null : q;
  }
}
