package org.rhumbatron.platform.db;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DatabaseUrlTest {

  @Test
  void anUnsupportedUrlIsAClearErrorNamingIt() {
    assertThatThrownBy(() -> Database.open("jdbc:mysql://db.example/rhumbatron"))
        .isInstanceOf(DatabaseException.class)
        .hasMessageContaining("jdbc:mysql://db.example/rhumbatron")
        .hasMessageContaining("jdbc:postgresql://");
    assertThatThrownBy(() -> Database.open("postgres://db.example/rhumbatron"))
        .isInstanceOf(DatabaseException.class)
        .hasMessageContaining("postgres://db.example/rhumbatron");
    assertThatThrownBy(() -> Database.open(" "))
        .isInstanceOf(DatabaseException.class)
        .hasMessageContaining("no database given");
    assertThatThrownBy(() -> Database.open("jdbc:sqlite::memory:"))
        .isInstanceOf(DatabaseException.class)
        .hasMessageContaining("jdbc:sqlite::memory:")
        .hasMessageContaining("file path");
  }

  @Test
  void anUnreachablePostgresIsAClearErrorNamingTheUrlWithoutItsPassword() {
    assertThatThrownBy(
            () -> Database.open("jdbc:postgresql://127.0.0.1:1/rt?user=u&password=secret"))
        .isInstanceOf(DatabaseException.class)
        .hasMessageContaining("cannot open jdbc:postgresql://127.0.0.1:1/rt?user=u&password=***")
        .hasMessageNotContaining("secret");
  }

  @Test
  void aPlainPathAndAJdbcSqliteUrlAreSqlite(@TempDir Path dir) {
    Path file = dir.resolve("sub/dir/core.db");
    try (Database db = Database.open(file.toString())) {
      assertThat(db.dialect()).isSameAs(SqliteDialect.INSTANCE);
      assertThat(db.url()).isEqualTo("jdbc:sqlite:" + file.toAbsolutePath());
    }
    int newest =
        Migrations.classpath(Migrations.DEFAULT_LOCATION).load(SqliteDialect.INSTANCE).stream()
            .mapToInt(Migration::version)
            .max()
            .orElseThrow();
    try (Database db = Database.open("jdbc:sqlite:" + file)) {
      assertThat(Migrations.currentVersion(db)).isEqualTo(newest);
    }
  }

  @Test
  void passwordsAreRedacted() {
    assertThat(DatabaseUrl.redact("jdbc:postgresql://h/db?user=u&password=p&ssl=true"))
        .isEqualTo("jdbc:postgresql://h/db?user=u&password=***&ssl=true");
    assertThat(DatabaseUrl.redact("jdbc:postgresql://u:p@h/db"))
        .isEqualTo("jdbc:postgresql://u:***@h/db");
  }
}
