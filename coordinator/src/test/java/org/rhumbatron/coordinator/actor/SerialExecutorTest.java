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

  @Test
  void anAsyncTaskHoldsItsLaneUntilItsStageCompletesButNotThePoolThread() throws Exception {
    ExecutorService pool = Executors.newSingleThreadExecutor(r -> new Thread(r, "pool"));
    try {
      SerialExecutor lane = new SerialExecutor(pool);
      SerialExecutor other = new SerialExecutor(pool);
      CompletableFuture<Void> commit = new CompletableFuture<>();
      List<String> order = Collections.synchronizedList(new ArrayList<>());
      CompletableFuture<String> nextAsyncRanOn = new CompletableFuture<>();
      CompletableFuture<String> plainRanOn = new CompletableFuture<>();
      lane.executeAsync(
          () -> {
            order.add("first");
            return commit;
          });
      lane.executeAsync(
          () -> {
            order.add("second");
            nextAsyncRanOn.complete(Thread.currentThread().getName());
            return CompletableFuture.completedFuture(null);
          });
      lane.execute(
          () -> {
            order.add("plain");
            plainRanOn.complete(Thread.currentThread().getName());
          });
      // The pool's only thread is free while the first task waits: another lane runs on it.
      CompletableFuture<Void> otherRan = new CompletableFuture<>();
      other.execute(() -> otherRan.complete(null));
      otherRan.get(5, TimeUnit.SECONDS);
      assertThat(order).containsExactly("first");
      assertThat(lane.isIdle()).isFalse();

      Thread completer = new Thread(() -> commit.complete(null), "completer");
      completer.start();
      completer.join();

      // The next async task started on the completing thread; the plain one went to the pool.
      assertThat(nextAsyncRanOn.get(5, TimeUnit.SECONDS)).isEqualTo("completer");
      assertThat(plainRanOn.get(5, TimeUnit.SECONDS)).isEqualTo("pool");
      assertThat(order).containsExactly("first", "second", "plain");
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void anAsyncTaskThatThrowsOrFailsDoesNotStopItsLane() throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try {
      SerialExecutor lane = new SerialExecutor(pool);
      lane.executeAsync(
          () -> {
            throw new IllegalStateException("start failed");
          });
      lane.executeAsync(() -> CompletableFuture.failedFuture(new IllegalStateException("failed")));
      CompletableFuture<Void> ran = new CompletableFuture<>();
      lane.execute(() -> ran.complete(null));
      ran.get(5, TimeUnit.SECONDS);
    } finally {
      pool.shutdownNow();
    }
  }
}
