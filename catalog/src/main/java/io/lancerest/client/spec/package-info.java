/**
 * The operations of the Lance REST Namespace spec, with their routes and retry classes: a leaf
 * that the client, its errors and its transport all refer to.
 */
package io.lancerest.client.spec;
