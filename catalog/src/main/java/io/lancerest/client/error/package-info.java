/**
 * The errors a Lance REST Namespace server answers, one exception per spec error code, each
 * naming the operation and the object it concerned.
 */
package io.lancerest.client.error;
