/**
 * The metrics sink: data points as rows of {@code platform_metrics}, under one of the seed's two
 * bindings ({@link org.rhumbatron.platform.metrics.MetricsBinding}): {@code EVENT_METRICS} (the
 * analytics projector, one point per fresh Event) and {@code METRICS} (every other module's own
 * points). A point can be written in the caller's transaction, so it commits with its effect.
 */
package org.rhumbatron.platform.metrics;
