package org.rhumbatron.integration;

import org.rhumbatron.lifecycle.workflow.WorkflowEngine;
import org.rhumbatron.platform.queue.Commands;
import org.rhumbatron.protocol.Command;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The Workflow of a start command, and the send of such a command. */
final class WorkflowStarts {
  private static final Logger log = LoggerFactory.getLogger(WorkflowStarts.class);
  private final WorkflowEngine workflows;
  private final Commands commands;
  private final Steps steps;

  WorkflowStarts(WorkflowEngine workflows, Commands commands, Steps steps) {
    this.workflows = workflows;
    this.commands = commands;
    this.steps = steps;
  }

  /**
   * verification.start and release.start: the Workflow of the command's idempotency key; a second
   * start of one instance id is rejected by the engine and is not an error here (the redelivery
   * acks, and an instance still running resumes).
   */
  void start(Command c) {
    Workflows.WorkflowStart s = Workflows.workflowStartFor(c).orElseThrow();
    WorkflowEngine.Start started = workflows.start(s.type(), s.instanceId(), s.input());
    log.info(
        "{} {}: workflow {} {}",
        c.commandType().wireName(),
        c.commandId(),
        s.instanceId(),
        started);
  }

  /** Sends a start command; only when the send fails is the Workflow started directly (seed). */
  void sendOrStart(Command start) throws Exception {
    try {
      steps.await(commands.send(start));
    } catch (Exception e) {
      Workflows.WorkflowStart s = Workflows.workflowStartFor(start).orElseThrow();
      log.warn(
          "{} not sent ({}): starting workflow {} directly",
          start.commandId(),
          e.toString(),
          s.instanceId());
      workflows.start(s.type(), s.instanceId(), s.input());
    }
  }
}
