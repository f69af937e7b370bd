/**
 * The fault, load, bad-input and secrets suite of the catalog (issue 8): a fault-injecting proxy
 * ({@link io.lancerest.faults.FaultProxy}) between Spark and the real directory server, and the
 * tests that run through it. Results are summarised in {@code docs/robustness.md}; the bounded
 * subset runs in {@code mvn verify}, the full one with {@code -Dlancerest.longTests=true}.
 */
package io.lancerest.faults;
