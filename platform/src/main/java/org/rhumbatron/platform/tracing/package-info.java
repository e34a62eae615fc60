/**
 * Traces: the process's tracer ({@link org.rhumbatron.platform.tracing.Tracing}, off unless {@code
 * otel.exporter.otlp.endpoint} is set), the W3C trace context as headers and outbox columns carry
 * it ({@link org.rhumbatron.platform.tracing.TraceContext}), and the names of the ids spans carry
 * ({@link org.rhumbatron.platform.tracing.TraceAttributes}).
 */
package org.rhumbatron.platform.tracing;
