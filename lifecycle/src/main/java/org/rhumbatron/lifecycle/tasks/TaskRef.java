package org.rhumbatron.lifecycle.tasks;

/**
 * What an Agent names when it reports for its Task: the Task, the Agent and the attempt it was
 * admitted for. The lifecycle checks all three against the Task's row.
 */
public record TaskRef(
    String projectId, String changeId, String taskId, String agentId, int attempt) {}
