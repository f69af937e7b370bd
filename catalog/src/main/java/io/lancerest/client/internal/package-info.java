/**
 * The client's machinery no caller needs: which errors are retried and how long to wait, and
 * the HTTP interceptors that add headers and classify answers.
 */
package io.lancerest.client.internal;
