package org.rhumbatron.platform.jetstream;

import java.util.List;
import org.rhumbatron.protocol.RhumbatronException;

/**
 * Core cannot bring a stream to the topology: the server refused, or a field differs that the
 * server cannot change in place (storage type, retention). Carries the stream and the offending
 * fields; core never deletes a stream to fix it.
 */
public class TopologyException extends RhumbatronException {
  private final String stream;
  private final List<FieldDrift> fields;

  public TopologyException(
      String stream, List<FieldDrift> fields, String message, Throwable cause) {
    super(message, cause);
    this.stream = stream;
    this.fields = List.copyOf(fields);
  }

  /** The (first) stream that could not be brought to the topology. */
  public String stream() {
    return stream;
  }

  public List<FieldDrift> fields() {
    return fields;
  }
}
