package org.rhumbatron.lifecycle.changes;

import java.util.List;

/**
 * What change.dispatch did to a Change.
 *
 * @param changeState the Change's state after it, by its stored name
 * @param readied Tasks that became ready
 * @param admitted Tasks that got an Agent
 * @param wakes one per Task an Agent holds but has not started: the newly admitted and any whose
 *     wake an earlier delivery may not have sent (the queue drops a repeat)
 * @param verification true when every Task completed and the Change moved to verifying
 */
public record Dispatched(
    String changeState, int readied, int admitted, List<Wake> wakes, boolean verification) {

  static Dispatched nothing(ChangeState state) {
    return new Dispatched(state.dbName(), 0, 0, List.of(), false);
  }
}
