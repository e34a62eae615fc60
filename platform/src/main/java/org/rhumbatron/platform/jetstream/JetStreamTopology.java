package org.rhumbatron.platform.jetstream;

import io.nats.client.Connection;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import io.nats.client.api.RetentionPolicy;
import io.nats.client.api.ServerInfo;
import io.nats.client.api.StorageType;
import io.nats.client.api.StreamConfiguration;
import io.nats.client.api.StreamInfo;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.config.SettingsException;
import org.rhumbatron.platform.jetstream.TopologyReport.Action;
import org.rhumbatron.platform.jetstream.TopologyReport.StreamOutcome;
import org.rhumbatron.protocol.EventStreams;
import org.rhumbatron.protocol.Queue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The streams of the seed, created or corrected at core start: {@code EVENTS_00}..{@code EVENTS_07}
 * on {@code events.00}..{@code events.07} with limits retention, and {@code COMMANDS}, a work-queue
 * stream on {@code cmd.<queue>}; all on file storage with the ages, duplicate window and replicas
 * ({@code streams.replicas}) of {@link Settings}.
 *
 * <p>{@link #ensure()} compares subjects, retention, storage, max_age, duplicate_window and
 * num_replicas of each existing stream and updates a drifted one in place, keeping its other
 * settings (a clustered nats-server moves a stream to more or fewer replicas in place). nats-server
 * 2.9 cannot update storage type or retention in place, and core will not delete a stream's data to
 * get there: such drift fails the start, before any stream is touched.
 */
public final class JetStreamTopology {
  private static final Logger log = LoggerFactory.getLogger(JetStreamTopology.class);
  private static final int STREAM_NOT_FOUND = 10059;
  // nats-server's refusals of a replica count: no peers for placement, not enough resources, no
  // cluster at all.
  private static final Set<Integer> TOO_MANY_REPLICAS = Set.of(10005, 10023, 10074);

  private final JetStreamManagement jsm;
  private final List<StreamConfiguration> streams;
  private final int replicas;

  /**
   * The topology on {@code connection}'s server. A replica count above the servers that can hold a
   * copy is refused before any stream is touched when the server says so: a server without a
   * cluster holds one copy only.
   */
  public JetStreamTopology(Connection connection, Settings settings) throws IOException {
    this(connection.jetStreamManagement(), settings);
    checkReplicas(connection, replicas);
  }

  /** The topology through {@code jsm}, without the check of the cluster's size at start. */
  public JetStreamTopology(JetStreamManagement jsm, Settings settings) {
    this.jsm = Objects.requireNonNull(jsm, "jsm");
    this.streams = desiredStreams(settings);
    this.replicas = settings.get(Settings.STREAM_REPLICAS);
  }

  /**
   * Refuses {@code replicas} above 1 on a server that runs without a cluster: it would make a
   * stream of one copy and say nothing (nats-server adjusts the count down).
   *
   * @throws SettingsException naming the setting, the count and the server
   */
  public static void checkReplicas(Connection connection, int replicas) {
    ServerInfo info = connection.getServerInfo();
    if (replicas > 1 && (info.getCluster() == null || info.getCluster().isEmpty())) {
      throw new SettingsException(
          Settings.STREAM_REPLICAS.key(),
          replicas
              + " copies asked, but nats-server "
              + info.getServerName()
              + " at "
              + connection.getConnectedUrl()
              + " runs without a cluster and keeps one copy of a stream: set streams.replicas=1,"
              + " or run a cluster of at least "
              + replicas
              + " servers and give --nats their URLs");
    }
  }

  /** The wanted configuration of every stream, event streams first, then {@code COMMANDS}. */
  public static List<StreamConfiguration> desiredStreams(Settings settings) {
    Duration duplicateWindow = settings.get(Settings.DUPLICATE_WINDOW);
    int replicas = settings.get(Settings.STREAM_REPLICAS);
    List<StreamConfiguration> out = new ArrayList<>();
    for (int i = 0; i < EventStreams.STREAM_COUNT; i++) {
      out.add(
          StreamConfiguration.builder()
              .name(EventStreams.streamName(i))
              .subjects(EventStreams.streamSubject(i))
              .retentionPolicy(RetentionPolicy.Limits)
              .storageType(StorageType.File)
              .maxAge(settings.get(Settings.EVENT_STREAM_MAX_AGE))
              .duplicateWindow(duplicateWindow)
              .replicas(replicas)
              .build());
    }
    out.add(
        StreamConfiguration.builder()
            .name(Queue.STREAM_NAME)
            .subjects(Arrays.stream(Queue.values()).map(Queue::subject).toList())
            .retentionPolicy(RetentionPolicy.WorkQueue)
            .storageType(StorageType.File)
            .maxAge(settings.get(Settings.COMMAND_STREAM_MAX_AGE))
            .duplicateWindow(duplicateWindow)
            .replicas(replicas)
            .build());
    return List.copyOf(out);
  }

  public List<StreamConfiguration> streams() {
    return streams;
  }

  /**
   * Creates missing streams and corrects drifted ones.
   *
   * @throws TopologyException when a stream has drift the server cannot update in place, or the
   *     server refuses a create or update
   */
  public TopologyReport ensure() {
    Map<StreamConfiguration, StreamConfiguration> existing = new LinkedHashMap<>();
    for (StreamConfiguration wanted : streams) {
      existing.put(wanted, find(wanted.getName()));
    }
    refuseImmutableDrift(existing);

    List<StreamOutcome> outcomes = new ArrayList<>();
    existing.forEach(
        (wanted, actual) -> {
          if (actual == null) {
            outcomes.add(create(wanted));
          } else {
            outcomes.add(correct(wanted, actual));
          }
        });
    TopologyReport report = new TopologyReport(outcomes);
    log.info("JetStream topology: {}", report);
    return report;
  }

  /** The fields of {@code actual} that differ from {@code wanted}, by their server names. */
  static List<FieldDrift> drift(StreamConfiguration wanted, StreamConfiguration actual) {
    List<FieldDrift> out = new ArrayList<>();
    TreeSet<String> wantedSubjects = new TreeSet<>(wanted.getSubjects());
    TreeSet<String> actualSubjects = new TreeSet<>(actual.getSubjects());
    if (!wantedSubjects.equals(actualSubjects)) {
      out.add(new FieldDrift("subjects", actualSubjects.toString(), wantedSubjects.toString()));
    }
    compare(out, "retention", actual.getRetentionPolicy(), wanted.getRetentionPolicy());
    compare(out, "storage", actual.getStorageType(), wanted.getStorageType());
    compare(out, "max_age", actual.getMaxAge(), wanted.getMaxAge());
    compare(out, "duplicate_window", actual.getDuplicateWindow(), wanted.getDuplicateWindow());
    compare(out, "num_replicas", actual.getReplicas(), wanted.getReplicas());
    return out;
  }

  /**
   * nats-server rejects an update of the storage type and, in 2.9, of the retention policy (2.10+
   * still refuses a change to or from work-queue), so these need an operator, not an update.
   */
  static boolean immutable(FieldDrift drift) {
    return drift.field().equals("storage") || drift.field().equals("retention");
  }

  private static <T> void compare(List<FieldDrift> out, String field, T actual, T wanted) {
    if (!Objects.equals(actual, wanted)) {
      out.add(new FieldDrift(field, String.valueOf(actual), String.valueOf(wanted)));
    }
  }

  private void refuseImmutableDrift(Map<StreamConfiguration, StreamConfiguration> existing) {
    Map<String, List<FieldDrift>> blocked = new LinkedHashMap<>();
    existing.forEach(
        (wanted, actual) -> {
          if (actual != null) {
            List<FieldDrift> fixed =
                drift(wanted, actual).stream().filter(JetStreamTopology::immutable).toList();
            if (!fixed.isEmpty()) {
              blocked.put(wanted.getName(), fixed);
            }
          }
        });
    if (blocked.isEmpty()) {
      return;
    }
    String details =
        blocked.entrySet().stream()
            .map(e -> "stream " + e.getKey() + ": " + e.getValue())
            .collect(Collectors.joining("; "));
    Map.Entry<String, List<FieldDrift>> first = blocked.entrySet().iterator().next();
    throw new TopologyException(
        first.getKey(),
        first.getValue(),
        "JetStream topology cannot be corrected in place ("
            + details
            + "): nats-server cannot change these fields of an existing stream and core does not"
            + " delete stream data; move or drop the stream by hand, then start again",
        null);
  }

  private StreamConfiguration find(String stream) {
    try {
      return jsm.getStreamInfo(stream).getConfiguration();
    } catch (JetStreamApiException e) {
      if (e.getApiErrorCode() == STREAM_NOT_FOUND) {
        return null;
      }
      throw refused(stream, List.of(), "read", e);
    } catch (IOException e) {
      throw refused(stream, List.of(), "read", e);
    }
  }

  private StreamOutcome create(StreamConfiguration wanted) {
    try {
      jsm.addStream(wanted);
    } catch (JetStreamApiException | IOException e) {
      throw refused(wanted.getName(), List.of(), "create", e);
    }
    log.info(
        "created stream {} on {} ({} replicas)",
        wanted.getName(),
        wanted.getSubjects(),
        wanted.getReplicas());
    return new StreamOutcome(wanted.getName(), Action.CREATED, List.of());
  }

  /**
   * Gives the existing stream {@code stream} (e.g. an object store's {@code OBJ_<bucket>}) {@code
   * replicas} replicas when it has another count.
   *
   * @return whether it was updated
   * @throws TopologyException when the server refuses or the stream still differs
   */
  public static boolean ensureReplicas(JetStreamManagement jsm, String stream, int replicas) {
    StreamConfiguration actual;
    try {
      actual = jsm.getStreamInfo(stream).getConfiguration();
    } catch (JetStreamApiException | IOException e) {
      throw refused(stream, List.of(), "read", e);
    }
    if (actual.getReplicas() == replicas) {
      return false;
    }
    List<FieldDrift> drift =
        List.of(
            new FieldDrift(
                "num_replicas", String.valueOf(actual.getReplicas()), String.valueOf(replicas)));
    log.warn("stream {} drifted ({}); updating it", stream, drift);
    StreamInfo info;
    try {
      info = jsm.updateStream(StreamConfiguration.builder(actual).replicas(replicas).build());
    } catch (JetStreamApiException | IOException e) {
      throw refused(stream, drift, "update", e);
    }
    if (info.getConfiguration().getReplicas() != replicas) {
      throw new TopologyException(
          stream, drift, "stream " + stream + " still differs after an update: " + drift, null);
    }
    return true;
  }

  private StreamOutcome correct(StreamConfiguration wanted, StreamConfiguration actual) {
    List<FieldDrift> drift = drift(wanted, actual);
    if (drift.isEmpty()) {
      return new StreamOutcome(wanted.getName(), Action.UNCHANGED, List.of());
    }
    log.warn("stream {} drifted ({}); updating it", wanted.getName(), drift);
    // Start from the server's config so settings outside the topology (replicas, limits) stay.
    StreamConfiguration update =
        StreamConfiguration.builder(actual)
            .subjects(wanted.getSubjects())
            .retentionPolicy(wanted.getRetentionPolicy())
            .maxAge(wanted.getMaxAge())
            .duplicateWindow(wanted.getDuplicateWindow())
            .replicas(wanted.getReplicas())
            .build();
    StreamInfo info;
    try {
      info = jsm.updateStream(update);
    } catch (JetStreamApiException | IOException e) {
      throw refused(wanted.getName(), drift, "update", e);
    }
    List<FieldDrift> left = drift(wanted, info.getConfiguration());
    if (!left.isEmpty()) {
      throw new TopologyException(
          wanted.getName(),
          left,
          "stream " + wanted.getName() + " still differs after an update: " + left,
          null);
    }
    return new StreamOutcome(wanted.getName(), Action.UPDATED, drift);
  }

  static TopologyException refused(
      String stream, List<FieldDrift> drift, String what, Exception cause) {
    String fields = drift.isEmpty() ? "" : " (fields " + drift + ")";
    String hint =
        cause instanceof JetStreamApiException api
                && TOO_MANY_REPLICAS.contains(api.getApiErrorCode())
            ? "; streams.replicas asks for more copies than the NATS cluster has servers up"
            : "";
    return new TopologyException(
        stream,
        drift,
        "cannot " + what + " stream " + stream + fields + ": " + cause.getMessage() + hint,
        cause);
  }
}
