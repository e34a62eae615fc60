package org.rhumbatron.lifecycle.workflow;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class WorkflowDefinitionTest {
  private static final StepFunction NOTHING = ctx -> null;

  @Test
  void aDefinitionNeedsATypeAndStepsWithDistinctNames() {
    assertThatThrownBy(() -> WorkflowDefinition.of(" ", new Step("a", NOTHING)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("type");
    assertThatThrownBy(() -> WorkflowDefinition.of("release"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("release has no steps");
    assertThatThrownBy(
            () -> WorkflowDefinition.of("release", new Step("a", NOTHING), new Step("a", NOTHING)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("two steps named a");
    assertThatThrownBy(() -> new Step("", NOTHING)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(
            () -> new WorkflowDefinition("release", List.of(new Step("a", NOTHING)), null))
        .isInstanceOf(NullPointerException.class);
  }
}
