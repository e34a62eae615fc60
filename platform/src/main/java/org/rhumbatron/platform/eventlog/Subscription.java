package org.rhumbatron.platform.eventlog;

/**
 * The four subscriptions of every event stream (the seed's "Event router"): each is a durable
 * JetStream pull consumer of that name, with explicit ack, created at its first read.
 */
public enum Subscription {
  CAUSAL_ROUTER("causal-router"),
  PROJECT_VIEW_PROJECTOR("project-view-projector"),
  AUDIT_ARCHIVER("audit-archiver"),
  ANALYTICS_PROJECTOR("analytics-projector");

  private final String durableName;

  Subscription(String durableName) {
    this.durableName = durableName;
  }

  /** The durable consumer's name, the same on every stream. */
  public String durableName() {
    return durableName;
  }
}
