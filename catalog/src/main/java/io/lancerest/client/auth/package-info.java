/**
 * How the client authenticates: bearer tokens, API keys, OAuth2 client credentials refreshed
 * before they expire, and the {@code Secret} wrapper that keeps them out of logs.
 */
package io.lancerest.client.auth;
