package org.rhumbatron.router.maintenance;

import org.rhumbatron.protocol.Command;

/** Where the housekeeping jobs send their Commands (core: the queues' {@code commands.send}). */
@FunctionalInterface
public interface CommandSink {
  /** Sends {@code command}; throws when the send fails. */
  void send(Command command);
}
