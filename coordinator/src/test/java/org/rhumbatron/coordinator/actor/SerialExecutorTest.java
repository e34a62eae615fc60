package org.rhumbatron.coordinator.actor;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

class SerialExecutorTest {

  @Test
  void aLaneThatNeverRunsDryDoesNotStarveTheOtherLanesOfItsPool() throws Exception {
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try {
      SerialExecutor busy = new SerialExecutor(pool);
      SerialExecutor other = new SerialExecutor(pool);
      AtomicBoolean stop = new AtomicBoolean();
      Runnable[] refill = new Runnable[1];
      refill[0] =
          () -> {
            if (!stop.get()) {
              busy.execute(refill[0]); // always one more task queued behind this one
            }
          };
      busy.execute(refill[0]);
      CompletableFuture<Void> ran = new CompletableFuture<>();
      other.execute(() -> ran.complete(null));
      try {
        ran.get(5, TimeUnit.SECONDS);
      } finally {
        stop.set(true);
      }
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void tasksOfOneLaneRunInSubmissionOrderAcrossTurns() throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      SerialExecutor lane = new SerialExecutor(pool);
      List<Integer> seen = Collections.synchronizedList(new ArrayList<>());
      int n = SerialExecutor.TURN * 10 + 3;
      CompletableFuture<Void> done = new CompletableFuture<>();
      for (int i = 0; i < n; i++) {
        int k = i;
        lane.execute(() -> seen.add(k));
      }
      lane.execute(() -> done.complete(null));
      done.get(5, TimeUnit.SECONDS);
      List<Integer> expected = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        expected.add(i);
      }
      assertThat(seen).containsExactlyElementsOf(expected);
      assertThat(lane.isIdle()).isTrue();
    } finally {
      pool.shutdownNow();
    }
  }
}
