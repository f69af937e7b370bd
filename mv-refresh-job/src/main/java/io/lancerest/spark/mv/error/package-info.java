/**
 * What can go wrong, as types a caller can catch: {@link
 * io.lancerest.spark.mv.error.MaterializedViewException} is the base of every engine error, and
 * each subclass names one kind of mistake (a bad definition, a bad option, a view that is missing
 * or already exists, a cancelled refresh).
 */
package io.lancerest.spark.mv.error;
