package org.rhumbatron.platform.jetstream;

import java.util.List;

/** What {@link JetStreamTopology#ensure()} did to each stream, in topology order. */
public record TopologyReport(List<StreamOutcome> streams) {

  public enum Action {
    CREATED,
    UPDATED,
    UNCHANGED
  }

  /** One stream's outcome; {@code drift} lists the corrected fields of an updated stream. */
  public record StreamOutcome(String stream, Action action, List<FieldDrift> drift) {
    public StreamOutcome {
      drift = List.copyOf(drift);
    }
  }

  public TopologyReport {
    streams = List.copyOf(streams);
  }

  public List<String> created() {
    return names(Action.CREATED);
  }

  public List<String> updated() {
    return names(Action.UPDATED);
  }

  public List<String> unchanged() {
    return names(Action.UNCHANGED);
  }

  /** True when the run created or corrected at least one stream. */
  public boolean changed() {
    return streams.stream().anyMatch(s -> s.action() != Action.UNCHANGED);
  }

  public StreamOutcome outcome(String stream) {
    return streams.stream()
        .filter(s -> s.stream().equals(stream))
        .findFirst()
        .orElseThrow(
            () -> new IllegalArgumentException("no stream " + stream + " in the topology"));
  }

  private List<String> names(Action action) {
    return streams.stream().filter(s -> s.action() == action).map(StreamOutcome::stream).toList();
  }

  @Override
  public String toString() {
    return "created " + created() + ", updated " + updated() + ", unchanged " + unchanged();
  }
}
