package io.lancerest.spark.computed;

/** A public class that is no column function (for the refusal test). */
public class NotAFunction {}
