package org.rhumbatron.integration;

/**
 * What change.settle does to the dead letters of the Change it settled: the router owns them, and
 * the wiring gives its operator's {@code supersedeForChange} here.
 */
@FunctionalInterface
public interface SettledDeadLetters {
  /** Closes the Change's open dead letters as superseded; returns how many closed. */
  int supersede(String changeId);
}
