package org.rhumbatron.lifecycle.projects;

/**
 * A Project as its row holds it.
 *
 * @param status active, archived or deleted
 */
public record ProjectInfo(
    String projectId,
    String tenantId,
    String name,
    String status,
    long canonicalGeneration,
    boolean hasLiveApp) {}
