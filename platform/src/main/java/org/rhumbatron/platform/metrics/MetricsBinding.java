package org.rhumbatron.platform.metrics;

/** The seed's two bindings; both write rows to {@code platform_metrics}, column {@code binding}. */
public enum MetricsBinding {
  /** Data points that modules write about their own work (e.g. false wakeups). */
  METRICS,
  /** The analytics projector's one data point per fresh Event. */
  EVENT_METRICS
}
