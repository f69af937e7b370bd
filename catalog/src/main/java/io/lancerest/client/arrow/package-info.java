/**
 * Arrow helpers of the REST client: IPC bodies for the data routes (CreateTable, InsertIntoTable,
 * MergeInsertIntoTable send an Arrow stream, QueryTable answers an Arrow file) and the mapping
 * between the spec's JSON schema and Arrow's {@code Schema}.
 */
package io.lancerest.client.arrow;
