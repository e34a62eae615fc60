package org.rhumbatron.lifecycle;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.rhumbatron.lifecycle.changes.WorkGraph;
import org.rhumbatron.lifecycle.changes.WorkGraph.TaskSpec;
import org.rhumbatron.lifecycle.changes.WorkGraphException;

class WorkGraphTest {
  private static TaskSpec t(String key, String... deps) {
    return new TaskSpec(key, null, List.of(deps), List.of());
  }

  @Test
  void aDiamondAndALongChainAreDags() {
    assertThatCode(
            () -> WorkGraph.of(t("a"), t("b", "a"), t("c", "a"), t("d", "b", "c")).validate(10))
        .doesNotThrowAnyException();
    List<TaskSpec> chain = new ArrayList<>();
    chain.add(t("k0"));
    for (int i = 1; i < 500; i++) {
      chain.add(t("k" + i, "k" + (i - 1)));
    }
    assertThatCode(() -> new WorkGraph(chain).validate(500)).doesNotThrowAnyException();
  }

  @Test
  void aCycleBehindADiamondIsFoundAndNamed() {
    assertThatThrownBy(
            () ->
                WorkGraph.of(t("a"), t("b", "a", "d"), t("c", "b"), t("d", "c"), t("e", "a"))
                    .validate(10))
        .isInstanceOf(WorkGraphException.class)
        .hasMessage("work graph: cycle: b -> d -> c -> b");
  }

  @Test
  void aGraphOverTheLimitIsRefused() {
    assertThatThrownBy(() -> WorkGraph.of(t("a"), t("b"), t("c")).validate(2))
        .hasMessageContaining("3 Tasks, more than the limit of 2 (changes.tasks-max)");
  }
}
