package org.rhumbatron.indexer;

import org.rhumbatron.protocol.RhumbatronException;

/** A build of one project's index failed; the message names the project, generation and attempt. */
public final class IndexBuildException extends RhumbatronException {

  public IndexBuildException(String projectId, long generation, int attempt, String reason) {
    super(
        "index of project "
            + projectId
            + " generation "
            + generation
            + ", attempt "
            + attempt
            + ": "
            + reason);
  }
}
