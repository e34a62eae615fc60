package org.rhumbatron.platform.db;

import java.sql.ResultSet;
import java.sql.SQLException;

/** Maps the current row of a result set. */
@FunctionalInterface
public interface RowMapper<T> {
  T map(ResultSet row) throws SQLException;
}
