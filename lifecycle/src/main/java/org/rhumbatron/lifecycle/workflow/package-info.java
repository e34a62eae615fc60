/**
 * Workflows: durable step sequences stored in the database. A {@link
 * org.rhumbatron.lifecycle.workflow.WorkflowDefinition} names a type and its ordered steps; the
 * {@link org.rhumbatron.lifecycle.workflow.WorkflowEngine} starts an instance once per instance id
 * (a second start is {@code ALREADY_STARTED}), keeps each step's result, and resumes an interrupted
 * instance at its next step. The package knows nothing of Candidates or releases: their definitions
 * are registered by the code that owns them.
 */
package org.rhumbatron.lifecycle.workflow;
