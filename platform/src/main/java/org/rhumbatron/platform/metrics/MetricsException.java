package org.rhumbatron.platform.metrics;

import org.rhumbatron.protocol.RhumbatronException;

/** A data point broke a rule (its name, value or labels); the message names the field. */
public class MetricsException extends RhumbatronException {
  public MetricsException(String message) {
    super(message);
  }
}
