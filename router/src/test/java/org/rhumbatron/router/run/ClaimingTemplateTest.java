package org.rhumbatron.router.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.rhumbatron.platform.eventlog.EventRecord;
import org.rhumbatron.platform.eventlog.Subscription;
import org.rhumbatron.protocol.Event;
import org.rhumbatron.protocol.EventType;
import org.rhumbatron.router.EventLogFixture;
import org.rhumbatron.testkit.nats.NatsServerExtension;

/** The claiming template on real fetched batches, with effects that only record and report. */
class ClaimingTemplateTest {
  @RegisterExtension final NatsServerExtension nats = NatsServerExtension.perTest();

  static final int STREAM = 2;
  static final Subscription SUB = Subscription.CAUSAL_ROUTER;
  static final Instant AT = Instant.parse("2026-04-05T06:07:08Z");

  EventLogFixture log;
  final List<List<EventRecord>> given = new ArrayList<>();
  List<EventRecord> fetched;

  @BeforeEach
  void start() throws Exception {
    log = new EventLogFixture(nats.url());
  }

  @AfterEach
  void stop() throws Exception {
    log.close();
  }

  Event publish() throws Exception {
    Event e = EventLogFixture.event(EventType.TASK_READY, "p-template", AT);
    log.publish(STREAM, e);
    return e;
  }

  void publishAgain(Event e) throws Exception {
    log.publishRaw(STREAM, "resend-" + e.eventId(), log.codec().encodeEvent(e));
  }

  void publishMalformed(String msgId) throws Exception {
    log.publishRaw(STREAM, msgId, "{\"eventId\": 42}".getBytes(StandardCharsets.UTF_8));
  }

  /** The template's outcome of {@code effect} on a batch of an Event and a malformed record. */
  BatchOutcome anEventThenAMalformedRecord(ClaimingTemplate.Effect effect) throws Exception {
    publish();
    publishMalformed("msg-bad");
    fetched = log.fetch(STREAM, SUB, 2);
    return ClaimingTemplate.all().handle(fetched, effect);
  }

  /** An effect that keeps what it was given and reports {@code report}. */
  ClaimingTemplate.Effect reporting(ClaimingTemplate.Report report) {
    return events -> {
      given.add(events);
      return report;
    };
  }

  static List<String> ids(List<EventRecord> records) {
    return records.stream().map(r -> r.event().eventId()).toList();
  }

  @Test
  void aMalformedRecordIsReportedMalformedNotFailedAndTheOthersGoToTheEffect() throws Exception {
    Event a = publish();
    publishMalformed("msg-bad");
    Event b = publish();
    List<EventRecord> batch = log.fetch(STREAM, SUB, 3);

    BatchOutcome outcome =
        ClaimingTemplate.all().handle(batch, reporting(ClaimingTemplate.Report.applied()));

    assertThat(given).hasSize(1);
    assertThat(ids(given.get(0))).containsExactly(a.eventId(), b.eventId());
    assertThat(outcome.malformed()).containsExactly(batch.get(1));
    assertThat(outcome.failed()).as("not a failure that counts towards 5").isEmpty();
    assertThat(outcome.deferred()).isEmpty();
    assertThat(outcome.error()).isNull();
    assertThat(outcome.allRecordsApplied()).isFalse();
    assertThat(BatchFailures.malformedReason(batch.get(1)))
        .isEqualTo(
            "malformed envelope at stream sequence 2 (msg-bad): "
                + batch.get(1).decodeError().getMessage());
  }

  @Test
  void aBatchOfOnlyMalformedRecordsNeverCallsTheEffect() throws Exception {
    publishMalformed("msg-bad-1");
    publishMalformed("msg-bad-2");
    List<EventRecord> batch = log.fetch(STREAM, SUB, 2);

    BatchOutcome outcome =
        ClaimingTemplate.all().handle(batch, reporting(ClaimingTemplate.Report.applied()));

    assertThat(given).isEmpty();
    assertThat(outcome.malformed()).containsExactlyElementsOf(batch);
    assertThat(outcome.failed()).isEmpty();
  }

  @Test
  void anEventTwiceGoesToTheEffectOnceAndBothRecordsAreApplied() throws Exception {
    Event a = publish();
    Event b = publish();
    publishAgain(a);
    List<EventRecord> batch = log.fetch(STREAM, SUB, 3);

    BatchOutcome outcome =
        ClaimingTemplate.all().handle(batch, reporting(ClaimingTemplate.Report.applied()));

    assertThat(given.get(0)).containsExactly(batch.get(0), batch.get(1));
    assertThat(ids(given.get(0))).containsExactly(a.eventId(), b.eventId());
    assertThat(outcome.allRecordsApplied()).isTrue();
    assertThat(outcome.error()).isNull();
  }

  @Test
  void aFailedEventFailsWithBothItsRecordsAndTheReasonComesFirst() throws Exception {
    Event a = publish();
    publish();
    publishMalformed("msg-bad");
    publishAgain(a);
    List<EventRecord> batch = log.fetch(STREAM, SUB, 4);

    BatchOutcome outcome =
        ClaimingTemplate.all()
            .handle(
                batch,
                events ->
                    ClaimingTemplate.Report.failed(
                        "project p-template",
                        List.of(events.get(0)),
                        new IllegalStateException("boom")));

    assertThat(outcome.failed())
        .as("the failed event's two records")
        .containsExactly(batch.get(0), batch.get(3));
    assertThat(outcome.error()).isEqualTo("project p-template: boom");
    assertThat(outcome.malformed()).containsExactly(batch.get(2));
  }

  @Test
  void anEffectThatThrowsFailsItsEventsAndTheMalformedRecordStaysMalformed() throws Exception {
    BatchOutcome outcome =
        anEventThenAMalformedRecord(
            events -> {
              throw new IllegalStateException("the effect broke on " + ids(events));
            });

    String a = fetched.get(0).event().eventId();
    assertThat(ids(outcome.failed())).containsExactly(a);
    assertThat(outcome.error()).isEqualTo("IllegalStateException: the effect broke on [" + a + "]");
    assertThat(outcome.malformed()).containsExactly(fetched.get(1));
  }

  @Test
  void anEventWhoseSendFoundNoRespondersWaitsWhileTheMalformedRecordIsMalformed() throws Exception {
    BatchOutcome outcome =
        anEventThenAMalformedRecord(
            events ->
                ClaimingTemplate.Report.failed(
                    "routeCausalBatch",
                    events,
                    new IllegalStateException(
                        "a causal command was not sent",
                        new java.io.IOException(
                            "Error Publishing: 503 No Responders Available For Request"))));

    assertThat(ids(outcome.waiting())).containsExactly(fetched.get(0).event().eventId());
    assertThat(outcome.unavailable()).startsWith("routeCausalBatch: a causal command was not sent");
    assertThat(outcome.malformed()).containsExactly(fetched.get(1));
    assertThat(outcome.failed()).isEmpty();
    assertThat(outcome.error()).isNull();
    assertThat(outcome.allRecordsApplied()).isFalse();
  }

  @Test
  void theTakeLimitDefersTheRestUnseenAndADeferredEventDefersBothItsRecords() throws Exception {
    Event a = publish();
    Event b = publish();
    publishAgain(a);
    publish();
    List<EventRecord> batch = log.fetch(STREAM, SUB, 4);

    BatchOutcome outcome =
        ClaimingTemplate.taking(3)
            .handle(
                batch,
                events -> {
                  given.add(events);
                  return new ClaimingTemplate.Report(List.of(events.get(0)), List.of());
                });

    assertThat(ids(given.get(0))).containsExactly(a.eventId(), b.eventId());
    assertThat(outcome.deferred())
        .as("the record past the limit, then both records of the deferred event")
        .containsExactly(batch.get(3), batch.get(0), batch.get(2));
    assertThat(outcome.failed()).isEmpty();
    assertThat(outcome.error()).isNull();
  }

  @Test
  void anEffectThatReportsARecordTwiceIsAnError() throws Exception {
    publish();
    List<EventRecord> batch = log.fetch(STREAM, SUB, 1);

    assertThatThrownBy(
            () ->
                ClaimingTemplate.all()
                    .handle(
                        batch,
                        events ->
                            new ClaimingTemplate.Report(
                                events,
                                List.of(
                                    new ClaimingTemplate.Failure(
                                        "twice", events, new IllegalStateException("x"))))))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("stream sequence 1");
  }

  @Test
  void theSummaryKeepsThreeReasonsAndCountsTheRest() {
    assertThat(ClaimingTemplate.summary(List.of("a: 1", "b: 2"), "reason")).isEqualTo("a: 1; b: 2");
    assertThat(ClaimingTemplate.summary(List.of("a", "b", "c"), "reason")).isEqualTo("a; b; c");
    assertThat(ClaimingTemplate.summary(List.of("m1", "m2", "m3", "m4", "m5"), "malformed record"))
        .isEqualTo("m1; m2; m3; and 2 more malformed records");
    assertThat(ClaimingTemplate.summary(List.of("a", "b", "c", "d"), "reason"))
        .isEqualTo("a; b; c; and 1 more reason");
  }
}
