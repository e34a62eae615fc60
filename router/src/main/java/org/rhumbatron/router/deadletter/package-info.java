/**
 * The dead-letter path (the seed's "Dead-letter path", workers/event-router/src/dead-letter.ts and
 * workers/api/src/dead-letters.ts): {@link org.rhumbatron.router.deadletter.DeadLetterConsumer}
 * records each poison command in {@code dead_letters} (idempotent on {@code command_id}) and, in
 * the same transaction, blocks its ready or assigned Task with {@code task.failed} through the
 * shard's outbox, or puts the reason on the Change; {@link
 * org.rhumbatron.router.deadletter.DeadLetterOperator} lists, retries and dismisses dead letters
 * and closes them as succeeded, superseded or change_ended.
 */
package org.rhumbatron.router.deadletter;
