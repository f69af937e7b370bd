/**
 * The REST client against scripted HTTP servers (OkHttp MockWebServer on loopback): the answers
 * a real namespace server cannot be made to give — failures, odd error shapes, slow replies,
 * token endpoints, TLS and proxies.
 */
package io.lancerest.client.scripted;
