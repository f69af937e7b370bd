/**
 * Wire models of the Lance REST Namespace spec. One class per schema is generated at build time
 * from {@code src/main/openapi/lance-namespace-openapi.yaml} (see the catalog pom): beans with
 * fluent setters ({@code new DescribeTableRequest().id(id).version(3L)}) and getters. Requests
 * carry {@code identity} and {@code context}, which travel as HTTP headers and never in the body;
 * a response's {@code context} is filled from the response headers.
 *
 * <p>Written by hand here: {@link io.lancerest.client.model.Identity} (the spec's schema, with
 * its keys held as secrets), and the requests and answers of this project's own view-service
 * job routes, which the spec does not have.
 */
package io.lancerest.client.model;
