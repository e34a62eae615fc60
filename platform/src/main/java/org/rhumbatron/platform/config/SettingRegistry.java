package org.rhumbatron.platform.config;

import static org.rhumbatron.platform.config.Setting.duration;
import static org.rhumbatron.platform.config.Setting.intRange;
import static org.rhumbatron.platform.config.Setting.positiveInt;

import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import org.rhumbatron.platform.config.Settings.QueueRow;
import org.rhumbatron.protocol.Queue;

/**
 * Every setting {@link Settings} defines, in the order of its definitions, and the settings of each
 * row of the consumers table. Holds no {@link Settings}: it is ready before their definitions run.
 */
final class SettingRegistry {
  private static final List<Setting<?>> ALL = new ArrayList<>();
  private static final Map<Queue, QueueRow> QUEUE_ROWS = new EnumMap<>(Queue.class);

  private SettingRegistry() {}

  static <T> Setting<T> register(Setting<T> setting) {
    ALL.add(setting);
    return setting;
  }

  static List<Setting<?>> all() {
    return Collections.unmodifiableList(ALL);
  }

  /** The four settings of {@code queue}'s row, {@code queues.<queue>.*}, the seed's as defaults. */
  static void registerQueueRow(Queue queue) {
    String prefix = "queues." + queue.wireName() + ".";
    QUEUE_ROWS.put(
        queue,
        new QueueRow(
            queue,
            register(positiveInt(prefix + "batch", queue.batchSize())),
            register(positiveInt(prefix + "concurrency", queue.concurrency())),
            register(intRange(prefix + "retries", queue.retries(), 0, 1_000)),
            register(duration(prefix + "retry-delay", queue.retryDelay()))));
  }

  static QueueRow queueRow(Queue queue) {
    return QUEUE_ROWS.get(queue);
  }
}
