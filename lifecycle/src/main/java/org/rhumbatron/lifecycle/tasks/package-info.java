/**
 * A Change's Tasks: the Task state machine ({@link org.rhumbatron.lifecycle.tasks.TaskState}), its
 * one writer ({@code TaskLedger}), and {@link org.rhumbatron.lifecycle.tasks.AgentReports}, the
 * entry point for what an Agent reports on the Task it holds, with the tokens it reports with.
 */
package org.rhumbatron.lifecycle.tasks;
