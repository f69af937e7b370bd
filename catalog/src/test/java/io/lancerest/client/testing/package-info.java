/** Shared test fixtures: the in-process upstream REST namespace server. */
package io.lancerest.client.testing;
