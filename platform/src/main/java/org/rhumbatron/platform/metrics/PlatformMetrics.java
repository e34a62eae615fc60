package org.rhumbatron.platform.metrics;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.sql.SQLException;
import java.time.Clock;
import java.util.Map;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.db.Tx;

/** The sink of one binding: each point is one {@code platform_metrics} row. */
public final class PlatformMetrics implements Metrics {
  private static final String INSERT =
      "INSERT INTO platform_metrics"
          + " (binding, name, value, labels, project_id, event_id, recorded_at_ms)"
          + " VALUES (?, ?, ?, ?, ?, ?, ?)";
  private static final ObjectMapper JSON = new ObjectMapper();

  private final Database db;
  private final Clock clock;
  private final MetricsBinding binding;

  public PlatformMetrics(Database db, Clock clock, MetricsBinding binding) {
    this.db = db;
    this.clock = clock;
    this.binding = binding;
  }

  public MetricsBinding binding() {
    return binding;
  }

  @Override
  public void record(String name, double value, Map<String, String> labels) {
    DataPoint point = point(name, value, labels);
    db.inTransaction(
        tx -> {
          write(tx, point);
          return null;
        });
  }

  @Override
  public void record(Tx tx, String name, double value, Map<String, String> labels)
      throws SQLException {
    write(tx, point(name, value, labels));
  }

  /** Writes {@code point} with its own project, event and time, in {@code tx}. */
  public void write(Tx tx, DataPoint point) throws SQLException {
    tx.update(
        INSERT,
        binding.name(),
        point.name(),
        point.value(),
        labelsJson(point.labels()),
        point.projectId(),
        point.eventId(),
        point.recordedAt().toEpochMilli());
  }

  private DataPoint point(String name, double value, Map<String, String> labels) {
    return new DataPoint(name, value, labels, null, null, clock.instant());
  }

  private static String labelsJson(Map<String, String> labels) {
    try {
      return JSON.writeValueAsString(labels);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("a map of strings always serializes", e);
    }
  }
}
