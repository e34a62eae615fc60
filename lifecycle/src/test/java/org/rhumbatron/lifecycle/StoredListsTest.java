package org.rhumbatron.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.rhumbatron.lifecycle.changes.ChangeLedger;

/** The JSON lists of strings in the lifecycle's rows (scopes, dependencies, changesets). */
class StoredListsTest {

  @Test
  void whatIsWrittenReadsBackTheSame() {
    for (List<String> values :
        List.of(
            List.<String>of(),
            List.of("src/a/"),
            List.of("t1", "t2", "t3"),
            List.of("quote \" and back\\slash", "tab\tnew\nline", "ünïcödé ✓", ""))) {
      assertThat(ChangeLedger.fromJson(ChangeLedger.toJson(values))).isEqualTo(values);
    }
    assertThat(ChangeLedger.fromJson(null)).isEmpty();
    assertThat(ChangeLedger.fromJson(" [ \"a\" , \"b\" ] ")).containsExactly("a", "b");
  }

  @Test
  void aStoredValueThatIsNotAnArrayOfStringsNamesItself() {
    for (String json :
        List.of("{}", "\"a\"", "[1]", "[\"a\", null]", "[[\"a\"]]", "[\"a\"", "[\"a\"] [", "")) {
      assertThatThrownBy(() -> ChangeLedger.fromJson(json))
          .as(json)
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("not a JSON array of strings: " + json);
    }
  }
}
