package org.rhumbatron.workload;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.rhumbatron.lifecycle.changes.WorkGraph;

/**
 * The scopes of {@code bench lifecycle --scopes}: two resource keys overlap when they are the same
 * or one is a path prefix of the other (the seed's conflict rule).
 */
class LifecycleWorkloadTest {
  private static List<String> keys(WorkGraph graph) {
    return graph.tasks().stream().flatMap(t -> t.resourceScopes().stream()).toList();
  }

  private static boolean overlap(List<String> a, List<String> b) {
    return a.stream().anyMatch(x -> b.stream().anyMatch(y -> x.startsWith(y) || y.startsWith(x)));
  }

  @Test
  void disjointChangesShareNoFolderAndSharedOnesAllDo() {
    assertThat(overlap(keys(Workloads.twentyTasks()), keys(Workloads.twentyTasks()))).isTrue();
    assertThat(
            overlap(
                keys(LifecycleWorkload.twentyTasks("src/c0/")),
                keys(LifecycleWorkload.twentyTasks("src/c1/"))))
        .isFalse();
    assertThat(
            overlap(
                keys(LifecycleWorkload.twentyTasks("src/c1/")),
                keys(LifecycleWorkload.twentyTasks("src/c10/"))))
        .as("c1 is no path prefix of c10")
        .isFalse();
  }
}
