package org.rhumbatron.coordinator.view;

import org.rhumbatron.protocol.RhumbatronException;

/** An Event that the project view cannot apply (a poison event); names the event id. */
public final class ProjectionException extends RhumbatronException {
  private final String eventId;

  public ProjectionException(String eventId, String message) {
    super("event " + eventId + ": " + message);
    this.eventId = eventId;
  }

  public String eventId() {
    return eventId;
  }
}
