package org.rhumbatron.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.nats.client.Connection;
import io.nats.client.JetStreamManagement;
import io.nats.client.Nats;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.rhumbatron.coordinator.view.ProjectView;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.protocol.EventType;
import org.rhumbatron.protocol.StableIds;
import org.rhumbatron.testkit.nats.NatsServerExtension;

class CoreServiceTest {
  @RegisterExtension static NatsServerExtension nats = new NatsServerExtension();

  @TempDir Path data;

  @Test
  void createsTheTopologyAgainstAGivenServerAndServesHealthz() throws Exception {
    try (CoreService core = CoreService.start(CoreOptions.config(nats.url(), data, 0, Map.of()))) {
      assertThat(healthz(core.httpPort())).contains("\"status\":\"ok\"");
      try (Connection c = Nats.connect(nats.url())) {
        JetStreamManagement jsm = c.jetStreamManagement();
        assertThat(jsm.getStreamNames()).contains("EVENTS_00", "EVENTS_07", "COMMANDS").hasSize(9);
      }
    }
  }

  @Test
  void startsAPrivateNatsServerUnderTheDataDirectoryWithoutNatsUrl() throws Exception {
    String url;
    try (CoreService core = CoreService.start(CoreOptions.config(null, data, 0, Map.of()))) {
      url = core.natsUrl();
      assertThat(url).doesNotEndWith(":4222");
      assertThat(data.resolve("nats")).isDirectory();
      assertThat(healthz(core.httpPort())).contains("\"nats\":\"connected\"");
      try (Connection c = Nats.connect(url)) {
        assertThat(c.jetStreamManagement().getStreamNames()).hasSize(9);
      }
    }
    // Closing core stops its private server.
    assertThat(PortProbe.accepts(URI.create(url.replace("nats://", "tcp://")))).isFalse();
  }

  @Test
  void aSecondCoreOnTheSameDataDirectoryIsRefusedUntilTheFirstStops() throws Exception {
    String url;
    try (CoreService core = CoreService.start(CoreOptions.config(null, data, 0, Map.of()))) {
      url = core.natsUrl();
      assertThatThrownBy(() -> CoreService.start(CoreOptions.config(null, data, 0, Map.of())))
          .hasMessage(
              "data directory "
                  + data.toAbsolutePath().normalize()
                  + " is in use by another core (pid "
                  + ProcessHandle.current().pid()
                  + "): stop that core or give another --data");
      // The refused core started nothing: the first one's server still answers alone.
      assertThat(healthz(core.httpPort())).contains("\"nats\":\"connected\"");
    }
    assertThat(PortProbe.accepts(URI.create(url.replace("nats://", "tcp://")))).isFalse();
    try (CoreService again = CoreService.start(CoreOptions.config(null, data, 0, Map.of()))) {
      assertThat(healthz(again.httpPort())).contains("\"nats\":\"connected\"");
    }
  }

  @Test
  void aCommittedChangeEventReachesTheProjectViewThroughTheStreamAndANudge() throws Exception {
    try (CoreService core = CoreService.start(CoreOptions.config(nats.url(), data, 0, Map.of()))) {
      Event created =
          Event.builder()
              .eventId(StableIds.stableEventId("c-core", EventType.CHANGE_CREATED, null))
              .eventType(EventType.CHANGE_CREATED)
              .tenantId("t")
              .projectId("p-core")
              .changeId("c-core")
              .actor("test")
              .correlationId("c-core")
              .timestamp(Instant.parse("2026-12-02T10:00:00Z"))
              .build();
      core.coordinator()
          .changeEvents()
          .appendChangeEvents("p-core", "c-core", List.of(created))
          .get();
      await()
          .atMost(Duration.ofSeconds(20))
          .until(
              () ->
                  ProjectView.read(core.coordinator().database(), "p-core")
                          .map(v -> v.counts().getOrDefault("change", Map.of()).get("open"))
                          .orElse(0L)
                      == 1L);
      assertThat(core.router().nudgeRuns()).as("the publisher's nudge ran the router").isPositive();
    }
  }

  static String healthz(int port) throws Exception {
    HttpResponse<String> response =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/healthz")).build(),
                HttpResponse.BodyHandlers.ofString());
    assertThat(response.statusCode()).isEqualTo(200);
    return response.body();
  }
}
