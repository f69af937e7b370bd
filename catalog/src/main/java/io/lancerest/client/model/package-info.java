/**
 * Wire models of the Lance REST Namespace spec: one record per request and response schema,
 * field for field. Requests carry {@code identity} and {@code context}, which travel as HTTP
 * headers; responses end with {@code context}, filled from the response headers.
 */
package io.lancerest.client.model;
