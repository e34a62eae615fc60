package org.rhumbatron.router.causal;

import org.rhumbatron.protocol.RhumbatronException;

/**
 * A model call gave no usable answer. The message names the Event and what went wrong; it never
 * holds the API key or the request.
 */
public class ModelCallException extends RhumbatronException {

  /** How the call failed; each maps to the {@link ModelRoute.Reason} of the same name. */
  public enum Failure {
    TIMEOUT(ModelRoute.Reason.TIMEOUT),
    ERROR(ModelRoute.Reason.ERROR),
    MALFORMED(ModelRoute.Reason.MALFORMED);

    private final ModelRoute.Reason reason;

    Failure(ModelRoute.Reason reason) {
      this.reason = reason;
    }

    public ModelRoute.Reason reason() {
      return reason;
    }
  }

  private final Failure failure;
  private final String eventId;

  public ModelCallException(Failure failure, String eventId, String message, Throwable cause) {
    super(
        "clef-flash " + failure.reason.wireName() + " for event " + eventId + ": " + message,
        cause);
    this.failure = failure;
    this.eventId = eventId;
  }

  public ModelCallException(Failure failure, String eventId, String message) {
    this(failure, eventId, message, null);
  }

  public Failure failure() {
    return failure;
  }

  public String eventId() {
    return eventId;
  }
}
