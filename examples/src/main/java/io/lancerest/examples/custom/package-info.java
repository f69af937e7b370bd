/**
 * What a user writes in their own jar: a chunker and a batch table function implementing the
 * engine's public interfaces, named by class in {@code USING CHUNKER} / {@code USING UDTF}.
 */
package io.lancerest.examples.custom;
