package org.rhumbatron.platform.metrics;

import java.time.Instant;
import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * One row of {@code platform_metrics}.
 *
 * @param name snake case, e.g. {@code task_completed}
 * @param value a finite number
 * @param labels written as a JSON object with sorted keys
 * @param projectId the project the point is about, or null
 * @param eventId the Event the point counts (EVENT_METRICS), or null
 * @param recordedAt the time the point is about
 */
public record DataPoint(
    String name,
    double value,
    Map<String, String> labels,
    String projectId,
    String eventId,
    Instant recordedAt) {

  static final Pattern NAME = Pattern.compile("[a-z][a-z0-9_]{0,127}");

  public DataPoint {
    if (name == null || !NAME.matcher(name).matches()) {
      throw new MetricsException("name '" + name + "' must match " + NAME.pattern());
    }
    if (!Double.isFinite(value)) {
      throw new MetricsException("value of " + name + " must be finite, not " + value);
    }
    if (recordedAt == null) {
      throw new MetricsException("recordedAt of " + name + " is required");
    }
    labels = labels == null ? Map.of() : new TreeMap<>(labels);
    labels.forEach(
        (k, v) -> {
          if (k == null || v == null) {
            throw new MetricsException("labels of " + name + " must not hold null keys or values");
          }
        });
    labels = Collections.unmodifiableMap(labels);
  }
}
