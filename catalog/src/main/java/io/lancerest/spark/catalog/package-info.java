/**
 * The Spark catalog ({@link io.lancerest.spark.catalog.LanceRestCatalog}) over a Lance REST
 * namespace server: namespaces and table metadata through the REST client, table data through
 * the connector's lance-spark tables.
 */
package io.lancerest.spark.catalog;
