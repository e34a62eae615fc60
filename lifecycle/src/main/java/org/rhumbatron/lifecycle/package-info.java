/**
 * The Change lifecycle: the state of Projects, Changes, Tasks, intents, claims and changesets.
 * Every change runs in the owning actor's transaction with its Events: the shard of {@code
 * change:<id>} for a Change and its Tasks, the shard of a resource key for its intents and claims,
 * the shard of {@code project:<id>} for a Project's flags. {@link
 * org.rhumbatron.lifecycle.Lifecycle} is the one entry point, {@link
 * org.rhumbatron.lifecycle.LifecycleReads} its read API for other modules.
 */
package org.rhumbatron.lifecycle;
