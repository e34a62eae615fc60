package org.rhumbatron.platform.db;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class PlaceholdersTest {
  @Test
  void oneMarkerPerValue() {
    assertThat(Placeholders.of(List.of("a", "b", "c"))).isEqualTo("?, ?, ?");
    assertThat(Placeholders.of(1)).isEqualTo("?");
  }

  @Test
  void aCompoundKeyRepeatedWithItsSeparator() {
    assertThat(Placeholders.repeat("(a = ? AND b = ?)", " OR ", 2))
        .isEqualTo("(a = ? AND b = ?) OR (a = ? AND b = ?)");
  }
}
