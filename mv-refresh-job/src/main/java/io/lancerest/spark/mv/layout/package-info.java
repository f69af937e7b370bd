/**
 * How a view sits in its Lance table, read the same by Geneva: the table properties that carry
 * the definition ({@link io.lancerest.spark.mv.layout.GenevaLayout}) and the side table that
 * keeps rows a function failed on ({@link io.lancerest.spark.mv.layout.ErrorsTable}).
 */
package io.lancerest.spark.mv.layout;
