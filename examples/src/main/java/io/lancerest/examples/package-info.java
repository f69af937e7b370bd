/**
 * Runnable examples: the quickstart, the development server, and programs showing the catalog,
 * time travel, the REST client, refresh jobs and custom view functions.
 */
package io.lancerest.examples;
