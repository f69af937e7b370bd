/**
 * A client of the Lance REST Namespace spec, usable without Spark: {@link LanceRestClient} with
 * its configuration, transport (retries, timeouts, authentication headers) and paging.
 */
package io.lancerest.client;
