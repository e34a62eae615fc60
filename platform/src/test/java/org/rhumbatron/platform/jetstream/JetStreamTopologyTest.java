package org.rhumbatron.platform.jetstream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.nats.client.Connection;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import io.nats.client.api.RetentionPolicy;
import io.nats.client.api.StorageType;
import io.nats.client.api.StreamConfiguration;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.jetstream.TopologyReport.Action;
import org.rhumbatron.testkit.nats.NatsServerExtension;

/** The topology against a real nats-server; each test gets an empty server. */
class JetStreamTopologyTest {
  @RegisterExtension static NatsServerExtension nats = NatsServerExtension.perTest();

  private Connection connection;
  private JetStreamManagement jsm;

  @BeforeEach
  void connect() throws Exception {
    connection = JetStreamConnections.connect(nats.url(), "topology-test");
    jsm = connection.jetStreamManagement();
  }

  @AfterEach
  void disconnect() throws InterruptedException {
    connection.close();
  }

  private TopologyReport ensure() {
    return new JetStreamTopology(jsm, Settings.defaults()).ensure();
  }

  @Test
  void createsEveryStreamAsTheDesignSays() throws Exception {
    TopologyReport report = ensure();

    assertThat(report.created())
        .containsExactly(
            "EVENTS_00",
            "EVENTS_01",
            "EVENTS_02",
            "EVENTS_03",
            "EVENTS_04",
            "EVENTS_05",
            "EVENTS_06",
            "EVENTS_07",
            "COMMANDS");
    assertThat(jsm.getStreamNames()).hasSize(9);
    for (int i = 0; i < 8; i++) {
      StreamConfiguration events =
          jsm.getStreamInfo(String.format("EVENTS_%02d", i)).getConfiguration();
      assertThat(events.getSubjects()).containsExactly(String.format("events.%02d", i));
      assertThat(events.getRetentionPolicy()).isEqualTo(RetentionPolicy.Limits);
      assertThat(events.getStorageType()).isEqualTo(StorageType.File);
      assertThat(events.getMaxAge()).isEqualTo(Duration.ofDays(7));
      assertThat(events.getDuplicateWindow()).isEqualTo(Duration.ofHours(2));
    }
    StreamConfiguration commands = jsm.getStreamInfo("COMMANDS").getConfiguration();
    assertThat(commands.getSubjects())
        .containsExactlyInAnyOrder(
            "cmd.agent-wakeups",
            "cmd.integration",
            "cmd.verification",
            "cmd.release",
            "cmd.indexing",
            "cmd.dead-letter");
    assertThat(commands.getRetentionPolicy()).isEqualTo(RetentionPolicy.WorkQueue);
    assertThat(commands.getStorageType()).isEqualTo(StorageType.File);
    assertThat(commands.getMaxAge()).isEqualTo(Duration.ofDays(14));
    assertThat(commands.getDuplicateWindow()).isEqualTo(Duration.ofHours(2));
  }

  @Test
  void takesAgesAndWindowFromSettings() throws Exception {
    Settings settings =
        Settings.defaults()
            .with(Settings.EVENT_STREAM_MAX_AGE, Duration.ofDays(3))
            .with(Settings.COMMAND_STREAM_MAX_AGE, Duration.ofDays(5))
            .with(Settings.DUPLICATE_WINDOW, Duration.ofMinutes(30));

    new JetStreamTopology(jsm, settings).ensure();

    assertThat(jsm.getStreamInfo("EVENTS_06").getConfiguration().getMaxAge())
        .isEqualTo(Duration.ofDays(3));
    StreamConfiguration commands = jsm.getStreamInfo("COMMANDS").getConfiguration();
    assertThat(commands.getMaxAge()).isEqualTo(Duration.ofDays(5));
    assertThat(commands.getDuplicateWindow()).isEqualTo(Duration.ofMinutes(30));
  }

  @Test
  void secondEnsureChangesNothing() {
    ensure();

    TopologyReport second = ensure();

    assertThat(second.changed()).isFalse();
    assertThat(second.unchanged()).hasSize(9);
    assertThat(second.created()).isEmpty();
    assertThat(second.updated()).isEmpty();
  }

  @Test
  void correctsAMaxAgeChangedByHandAndKeepsMessagesAndOtherSettings() throws Exception {
    ensure();
    connection.jetStream().publish("events.03", "kept".getBytes(StandardCharsets.UTF_8));
    StreamConfiguration drifted =
        StreamConfiguration.builder(jsm.getStreamInfo("EVENTS_03").getConfiguration())
            .maxAge(Duration.ofHours(3))
            .maxMessages(1_000_000)
            .build();
    jsm.updateStream(drifted);

    // A restart of core is a new topology on a new connection.
    TopologyReport report = ensure();

    assertThat(report.updated()).containsExactly("EVENTS_03");
    assertThat(report.outcome("EVENTS_03").drift())
        .containsExactly(
            new FieldDrift(
                "max_age", Duration.ofHours(3).toString(), Duration.ofDays(7).toString()));
    assertThat(report.unchanged()).hasSize(8);
    var info = jsm.getStreamInfo("EVENTS_03");
    assertThat(info.getConfiguration().getMaxAge()).isEqualTo(Duration.ofDays(7));
    assertThat(info.getConfiguration().getMaxMsgs()).isEqualTo(1_000_000);
    assertThat(info.getStreamState().getMsgCount()).isEqualTo(1);
  }

  @Test
  void correctsSubjectsAndDuplicateWindow() throws Exception {
    ensure();
    jsm.updateStream(
        StreamConfiguration.builder(jsm.getStreamInfo("COMMANDS").getConfiguration())
            .subjects("cmd.agent-wakeups", "cmd.integration", "cmd.old-queue")
            .duplicateWindow(Duration.ofMinutes(2))
            .build());

    TopologyReport report = ensure();

    assertThat(report.updated()).containsExactly("COMMANDS");
    assertThat(report.outcome("COMMANDS").drift())
        .extracting(FieldDrift::field)
        .containsExactly("subjects", "duplicate_window");
    StreamConfiguration commands = jsm.getStreamInfo("COMMANDS").getConfiguration();
    assertThat(commands.getSubjects()).hasSize(6).doesNotContain("cmd.old-queue");
    assertThat(commands.getDuplicateWindow()).isEqualTo(Duration.ofHours(2));
  }

  @Test
  void refusesStorageDriftBeforeTouchingAnyStream() throws Exception {
    jsm.addStream(
        StreamConfiguration.builder()
            .name("EVENTS_05")
            .subjects("events.05")
            .storageType(StorageType.Memory)
            .build());
    connection.jetStream().publish("events.05", "data".getBytes(StandardCharsets.UTF_8));

    assertThatThrownBy(this::ensure)
        .isInstanceOfSatisfying(
            TopologyException.class,
            e -> {
              assertThat(e.stream()).isEqualTo("EVENTS_05");
              assertThat(e.fields()).extracting(FieldDrift::field).containsExactly("storage");
            })
        .hasMessageContaining("stream EVENTS_05")
        .hasMessageContaining("storage memory -> file");

    assertThat(jsm.getStreamNames()).containsExactly("EVENTS_05");
    assertThat(jsm.getStreamInfo("EVENTS_05").getStreamState().getMsgCount()).isEqualTo(1);
  }

  @Test
  void refusesRetentionDriftToWorkQueue() throws Exception {
    jsm.addStream(
        StreamConfiguration.builder()
            .name("COMMANDS")
            .subjects("cmd.>")
            .storageType(StorageType.File)
            .retentionPolicy(RetentionPolicy.Limits)
            .build());

    assertThatThrownBy(this::ensure)
        .isInstanceOfSatisfying(
            TopologyException.class,
            e -> {
              assertThat(e.stream()).isEqualTo("COMMANDS");
              assertThat(e.fields()).extracting(FieldDrift::field).containsExactly("retention");
            })
        .hasMessageContaining("retention limits -> workqueue");
    assertThat(jsm.getStreamInfo("COMMANDS").getConfiguration().getRetentionPolicy())
        .isEqualTo(RetentionPolicy.Limits);
  }

  /** Pins the nats-server 2.9 behaviour that {@link JetStreamTopology#immutable} relies on. */
  @Test
  void serverRejectsStorageAndRetentionUpdates() throws Exception {
    StreamConfiguration limits =
        StreamConfiguration.builder()
            .name("PROBE")
            .subjects("probe")
            .storageType(StorageType.File)
            .retentionPolicy(RetentionPolicy.Limits)
            .build();
    jsm.addStream(limits);

    assertThatThrownBy(
            () ->
                jsm.updateStream(
                    StreamConfiguration.builder(limits).storageType(StorageType.Memory).build()))
        .isInstanceOf(JetStreamApiException.class)
        .hasMessageContaining("storage");
    assertThatThrownBy(
            () ->
                jsm.updateStream(
                    StreamConfiguration.builder(limits)
                        .retentionPolicy(RetentionPolicy.WorkQueue)
                        .build()))
        .isInstanceOf(JetStreamApiException.class)
        .hasMessageContaining("retention");
    // 2.9 refuses even limits -> interest (2.10 allows that one).
    assertThatThrownBy(
            () ->
                jsm.updateStream(
                    StreamConfiguration.builder(limits)
                        .retentionPolicy(RetentionPolicy.Interest)
                        .build()))
        .isInstanceOf(JetStreamApiException.class)
        .hasMessageContaining("retention");
  }

  @Test
  void driftIgnoresSubjectOrder() {
    StreamConfiguration wanted =
        StreamConfiguration.builder()
            .name("S")
            .subjects("a", "b")
            .maxAge(Duration.ofDays(1))
            .build();
    StreamConfiguration actual =
        StreamConfiguration.builder()
            .name("S")
            .subjects("b", "a")
            .maxAge(Duration.ofDays(1))
            .build();

    assertThat(JetStreamTopology.drift(wanted, actual)).isEmpty();
  }

  @Test
  void reportsEveryStreamAction() {
    TopologyReport report = ensure();

    assertThat(report.streams())
        .extracting(TopologyReport.StreamOutcome::action)
        .containsOnly(Action.CREATED);
    assertThat(report.toString()).contains("created [EVENTS_00");
  }
}
