/**
 * A view's stored definition and its JSON formats: the kind, the source query, the function
 * entry ({@code udtf_spec} with its envelope and error handling), the view's state and the
 * identity of the source table it was built from.
 */
package io.lancerest.spark.mv.definition;
