package org.rhumbatron.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import org.junit.jupiter.api.Test;

class BenchRoundsTest {
  @Test
  void theMedianIgnoresOneSwingingRound() {
    assertThat(BenchRounds.median(List.of(9_000.0, 2_000.0, 10_000.0))).isEqualTo(9_000.0);
    assertThat(BenchRounds.median(List.of(4.0, 1.0, 3.0, 100.0))).isEqualTo(3.5);
    assertThat(BenchRounds.median(List.of(7.0))).isEqualTo(7.0);
    assertThatThrownBy(() -> BenchRounds.median(List.of())).hasMessageContaining("no rounds");
  }

  @Test
  void eachRoundIsWrittenBesideItsRawFigure() {
    ObjectNode out = new ObjectMapper().createObjectNode();

    BenchRounds.put(out, "outbox_per_s", List.of(10.4, 12.6));
    BenchRounds.put(out, "raw_per_s", List.of(40.0, 44.5));

    assertThat(out.toString())
        .isEqualTo("{\"rounds\":{\"outbox_per_s\":[10,13],\"raw_per_s\":[40,45]}}");
    assertThat(BenchRounds.ratio(10_000, 41_393)).isEqualTo(0.242);
  }
}
