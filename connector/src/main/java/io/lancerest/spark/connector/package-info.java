/**
 * The Lance data path behind catalog tables.
 *
 * <p>The Spark catalog resolves a table through the REST namespace and hands this package plain
 * values ({@link io.lancerest.spark.connector.TableHandle}): location, storage options, version,
 * and how executors reach the namespace again. From there {@link
 * io.lancerest.spark.connector.LanceTables} builds lance-spark's row-level dataset (read, INSERT,
 * DELETE / UPDATE / MERGE), resolves time travel, creates datasets and stages CTAS / RTAS; {@link
 * io.lancerest.spark.connector.LanceTableAlterations} edits properties and columns on the dataset
 * itself for servers that cannot; {@link io.lancerest.spark.connector.LanceFunctions} serves the
 * one function lance-spark's writer asks the catalog for.
 *
 * <p>Nothing here depends on the REST client: the catalog owns the wire, this package owns the
 * data.
 */
package io.lancerest.spark.connector;
