/**
 * The per-project read model: {@link org.rhumbatron.coordinator.view.ProjectViewActor} applies the
 * project-view-projector's deltas (counts and states of Changes, Tasks, Candidates and Agents, the
 * last event), which the API and dashboard show.
 */
package org.rhumbatron.coordinator.view;
