/** Spark session extensions of this project ({@link io.lancerest.spark.LanceRestSparkExtensions}). */
package io.lancerest.spark;
