/**
 * The command-line flags that say how to reach a Lance REST namespace and authenticate to it,
 * shared by the {@code spark-submit} main and the view service's main.
 */
package io.lancerest.spark.mv.cli;
