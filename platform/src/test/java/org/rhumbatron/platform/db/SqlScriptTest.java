package org.rhumbatron.platform.db;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class SqlScriptTest {

  @Test
  void splitsAtTopLevelSemicolonsOnly() {
    String script =
        """
        -- header; with a semicolon
        CREATE TABLE a (x TEXT DEFAULT 'a;b', "we;ird" INTEGER);
        /* block; comment */
        INSERT INTO a (x) VALUES ('it''s; fine');

        CREATE FUNCTION f() RETURNS int AS $$ SELECT 1; $$ LANGUAGE sql;
        CREATE TRIGGER t AFTER INSERT ON a BEGIN
          UPDATE a SET x = CASE WHEN x = '' THEN 'e' END;
          DELETE FROM a WHERE 0;
        END;
        """;

    List<SqlScript.Statement> statements = SqlScript.split(script);

    assertThat(statements).extracting(SqlScript.Statement::line).containsExactly(2, 4, 6, 7);
    assertThat(statements.get(0).sql()).startsWith("CREATE TABLE a").endsWith("INTEGER)");
    assertThat(statements.get(1).sql()).isEqualTo("INSERT INTO a (x) VALUES ('it''s; fine')");
    assertThat(statements.get(2).sql()).contains("$$ SELECT 1; $$");
    assertThat(statements.get(3).sql()).startsWith("CREATE TRIGGER").endsWith("END");
  }

  @Test
  void emptyScriptsHaveNoStatements() {
    assertThat(SqlScript.split("  -- nothing\n;\n")).isEmpty();
  }
}
