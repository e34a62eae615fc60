package org.rhumbatron.lifecycle.candidates;

import org.rhumbatron.coordinator.project.ProjectRootActor;

/** What an approval decided, and the release to start (null: none). */
public record Approval(ProjectRootActor.Promotion promotion, long generation, String releaseId) {}
