/**
 * The Change lifecycle: the state of Projects, Changes, Tasks, intents, claims, Candidates and
 * releases, one sub-package per aggregate. Every change runs in the owning actor's transaction with
 * its Events: the shard of {@code change:<id>} for a Change and its Tasks, the shard of a resource
 * key for its intents and claims, the shard of {@code project:<id>} for a Project's flags. {@link
 * org.rhumbatron.lifecycle.Lifecycle} builds the graph and hands out each aggregate's entry point,
 * which also answers the reads of its aggregate. This package holds what they share (the actors'
 * lanes, ids, commands, errors) and the reads that span aggregates (the router's {@link
 * org.rhumbatron.lifecycle.HeldWork} and {@link org.rhumbatron.lifecycle.RunReads}, the dashboard's
 * overview).
 */
package org.rhumbatron.lifecycle;
