package org.rhumbatron.lifecycle.projects;

import org.rhumbatron.coordinator.project.ProjectStatus;

/** A Project as its row holds it. */
public record ProjectInfo(
    String projectId,
    String tenantId,
    String name,
    ProjectStatus status,
    long canonicalGeneration,
    boolean hasLiveApp) {}
