package org.rhumbatron.platform.db;

import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.rhumbatron.protocol.Sha256;

/**
 * One versioned migration, from a file {@code V<n>__<name>.sql}.
 *
 * @param version the number {@code n}, applied in ascending order
 * @param name the part after {@code __}
 * @param file the file name, for messages
 * @param sql the script: statements separated by {@code ;}
 */
public record Migration(int version, String name, String file, String sql) {

  static final Pattern FILE_NAME = Pattern.compile("V(\\d{1,9})__([A-Za-z0-9_\\-]+)\\.sql");

  public Migration {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(file, "file");
    Objects.requireNonNull(sql, "sql");
    if (version < 1) {
      throw new MigrationException(file, "version must be at least 1, was " + version);
    }
  }

  /** Parses a file name; a {@code .sql} name that does not match is an error naming it. */
  public static Migration fromFile(String fileName, String sql) {
    Matcher m = FILE_NAME.matcher(fileName);
    if (!m.matches()) {
      throw new MigrationException(
          fileName, "not a migration file name: expected V<number>__<name>.sql");
    }
    return new Migration(Integer.parseInt(m.group(1)), m.group(2), fileName, sql);
  }

  /** SHA-256 of the script with line endings normalized, to notice an edit after it ran. */
  public String checksum() {
    return Sha256.hex(sql.replace("\r\n", "\n"));
  }
}
