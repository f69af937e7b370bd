/**
 * What the catalog instances of one SparkContext share (one REST client, token refresher and
 * credential relay per catalog configuration), counted by the instances that hold it and
 * released when the last one is closed or collected, or when the context ends.
 */
package io.lancerest.spark.catalog.shared;
