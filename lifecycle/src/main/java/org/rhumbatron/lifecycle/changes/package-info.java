/**
 * The Change aggregate and its work graph: {@link org.rhumbatron.lifecycle.changes.Changes} creates
 * Changes and forks and runs change.dispatch, {@link org.rhumbatron.lifecycle.changes.ChangeEnds}
 * ends them and runs change.settle; {@code ChangeLedger} holds the rows and builds their Events.
 * All of it on the shard of {@code change:<id>}.
 */
package org.rhumbatron.lifecycle.changes;
