package org.rhumbatron.platform.db;

import java.nio.file.Path;
import java.util.regex.Pattern;

/** Which database a {@code --db} value names: a plain path, jdbc:sqlite: or jdbc:postgresql:. */
record DatabaseUrl(Dialect dialect, String jdbcUrl, Path file) {

  static final String SQLITE_PREFIX = "jdbc:sqlite:";
  static final String POSTGRES_PREFIX = "jdbc:postgresql:";

  private static final Pattern PASSWORD_PARAM = Pattern.compile("(?i)(password=)[^&;]*");
  private static final Pattern USER_INFO = Pattern.compile("(//[^/:@]+:)[^@/]*@");

  static DatabaseUrl parse(String urlOrPath) {
    if (urlOrPath == null || urlOrPath.isBlank()) {
      throw new DatabaseException(
          "no database given: use a file path, jdbc:sqlite:<path> or jdbc:postgresql://host/db");
    }
    String s = urlOrPath.strip();
    if (s.startsWith(SQLITE_PREFIX)) {
      return sqlite(s.substring(SQLITE_PREFIX.length()), urlOrPath);
    }
    if (s.startsWith(POSTGRES_PREFIX)) {
      return new DatabaseUrl(PostgresDialect.INSTANCE, s, null);
    }
    if (s.startsWith("jdbc:") || s.contains("://")) {
      throw new DatabaseException(
          "unsupported database URL '"
              + redact(s)
              + "': use a file path, jdbc:sqlite:<path> or jdbc:postgresql://host[:port]/db");
    }
    return sqlite(s, urlOrPath);
  }

  private static DatabaseUrl sqlite(String path, String original) {
    // Several connections share the database, so a private in-memory database cannot work.
    if (path.isEmpty() || path.startsWith(":memory:") || path.contains("mode=memory")) {
      throw new DatabaseException(
          "unsupported database URL '" + redact(original) + "': SQLite needs a file path");
    }
    if (path.startsWith("file:") || path.contains("?")) {
      throw new DatabaseException(
          "unsupported database URL '"
              + redact(original)
              + "': give SQLite a plain file path (the layer sets the pragmas itself)");
    }
    Path file = Path.of(path).toAbsolutePath();
    return new DatabaseUrl(SqliteDialect.INSTANCE, SQLITE_PREFIX + file, file);
  }

  /** The URL without passwords, for messages and logs. */
  static String redact(String url) {
    return USER_INFO.matcher(PASSWORD_PARAM.matcher(url).replaceAll("$1***")).replaceAll("$1***@");
  }
}
