/**
 * The seed's {@code analytics-projector} ({@code analytics.ts}): maps lifecycle Events to metric
 * names ({@link org.rhumbatron.router.analytics.EventMetricNames}) and writes one data point per
 * fresh Event to EVENT_METRICS, at most 100 per tick, the claim and the point in one transaction.
 */
package org.rhumbatron.router.analytics;
