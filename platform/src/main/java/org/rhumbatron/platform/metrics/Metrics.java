package org.rhumbatron.platform.metrics;

import java.sql.SQLException;
import java.util.Map;
import org.rhumbatron.platform.db.Tx;

/** Where a module writes its own data points (the seed's METRICS binding). */
public interface Metrics {

  /** Writes one point now, in a transaction of its own. */
  void record(String name, double value, Map<String, String> labels);

  /** Writes one point now, in {@code tx}: it commits or rolls back with the caller's effect. */
  void record(Tx tx, String name, double value, Map<String, String> labels) throws SQLException;
}
