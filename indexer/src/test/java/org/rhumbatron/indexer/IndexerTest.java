package org.rhumbatron.indexer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.rhumbatron.lifecycle.LifecycleFixture;
import org.rhumbatron.platform.queue.Delivery;
import org.rhumbatron.platform.queue.Outcome;
import org.rhumbatron.protocol.Command;
import org.rhumbatron.protocol.CommandType;
import org.rhumbatron.protocol.Queue;
import org.rhumbatron.testkit.db.DatabaseTest;
import org.rhumbatron.testkit.db.TestDatabase;
import org.rhumbatron.testkit.nats.NatsServerExtension;

/**
 * The indexer on a real nats-server and database, SQLite and PostgreSQL: index.build makes a ready
 * row of the named (or the current) generation once however often it is delivered, a failed build
 * leaves its error and throws for the queue's retry, index.purge deletes a project's rows, and a
 * command that can never succeed is rejected.
 */
class IndexerTest {
  @RegisterExtension final NatsServerExtension nats = NatsServerExtension.perTest();

  TestDatabase testDatabase; // one per run: @DatabaseTest sets it

  TestDatabase db() {
    return testDatabase;
  }

  private LifecycleFixture f;
  private RecordingBuilder builder;
  private IndexConsumer indexer;

  /** Counts its builds; fails the first {@code failures} of them. */
  static final class RecordingBuilder implements IndexBuilder {
    final List<String> builds = new CopyOnWriteArrayList<>();
    int failures;

    @Override
    public void build(String projectId, long generation, int attempt) {
      builds.add(projectId + "@" + generation + "#" + attempt);
      if (builds.size() <= failures) {
        throw new IndexBuildException(projectId, generation, attempt, "disk full");
      }
    }
  }

  @BeforeEach
  void start() throws Exception {
    f = new LifecycleFixture(nats.url(), db().url(), Map.of());
    builder = new RecordingBuilder();
    indexer = new IndexConsumer(f.lifecycle, f.database, builder, f.clock);
    f.project("p1");
    // As if three promotions had advanced it: the indexer only reads the generation.
    f.database.inTransaction(
        tx -> tx.update("UPDATE projects SET canonical_generation = 3 WHERE project_id = 'p1'"));
  }

  @AfterEach
  void stop() {
    f.close();
  }

  private static Delivery delivery(long n) {
    return new Delivery(Queue.INDEXING, n, 1, Instant.EPOCH, null);
  }

  private Command command(CommandType type, String projectId, Long generation) {
    ObjectNode payload = JsonNodeFactory.instance.objectNode();
    if (generation != null) {
      payload.put("generation", generation);
    }
    return Command.builder()
        .commandId("cmd_test_" + type.wireName() + "_" + projectId + "_" + generation)
        .commandType(type)
        .projectId(projectId)
        .createdAt(f.clock.instant())
        .payload(payload)
        .build();
  }

  private Command build(String projectId, Long generation) {
    return command(CommandType.INDEX_BUILD, projectId, generation);
  }

  /** The rows as {@code project@generation state attempts last_error}. */
  private List<String> rows() {
    return f.database.read(
        tx ->
            tx.query(
                "SELECT project_id, generation, state, attempts, last_error FROM project_indexes"
                    + " ORDER BY project_id, generation",
                rs ->
                    rs.getString(1)
                        + "@"
                        + rs.getLong(2)
                        + " "
                        + rs.getString(3)
                        + " "
                        + rs.getInt(4)
                        + " "
                        + rs.getString(5)));
  }

  @DatabaseTest
  void aBuildOfTheGivenGenerationMakesAReadyRow() throws Exception {
    assertThat(indexer.handle(build("p1", 2L), delivery(1))).isInstanceOf(Outcome.Ack.class);

    assertThat(builder.builds).containsExactly("p1@2#1");
    assertThat(rows()).containsExactly("p1@2 ready 1 null");
  }

  @DatabaseTest
  void aBuildDeliveredTwiceBuildsOnce() throws Exception {
    Command c = build("p1", 3L);
    assertThat(indexer.handle(c, delivery(1))).isInstanceOf(Outcome.Ack.class);
    assertThat(indexer.handle(c, delivery(2))).isInstanceOf(Outcome.Ack.class);
    // The router's second command for the same generation (artifact.promoted, then
    // canonical.advanced) has another id and builds nothing either.
    Command other =
        Command.builder()
            .commandId("cmd_evt_other_index")
            .commandType(CommandType.INDEX_BUILD)
            .projectId("p1")
            .createdAt(f.clock.instant())
            .payload(JsonNodeFactory.instance.objectNode().put("generation", 3))
            .build();
    assertThat(indexer.handle(other, delivery(1))).isInstanceOf(Outcome.Ack.class);

    assertThat(builder.builds).containsExactly("p1@3#1");
    assertThat(rows()).containsExactly("p1@3 ready 1 null");
  }

  @DatabaseTest
  void aFailedBuildLeavesItsErrorAndThrowsSoTheRetryBuildsAgain() throws Exception {
    builder.failures = 1;
    Command c = build("p1", 3L);

    assertThatThrownBy(() -> indexer.handle(c, delivery(1)))
        .isInstanceOf(IndexBuildException.class)
        .hasMessageContaining("disk full");
    assertThat(rows())
        .containsExactly(
            "p1@3 building 1 org.rhumbatron.indexer.IndexBuildException: index of project p1"
                + " generation 3, attempt 1: disk full");

    // The queue's redelivery is the second attempt; its error stays as the last one seen.
    assertThat(indexer.handle(c, delivery(2))).isInstanceOf(Outcome.Ack.class);
    assertThat(builder.builds).containsExactly("p1@3#1", "p1@3#2");
    assertThat(rows()).hasSize(1);
    assertThat(rows().get(0)).startsWith("p1@3 ready 2 ").contains("attempt 1: disk full");
  }

  @DatabaseTest
  void aBackfillWithoutAGenerationIndexesTheProjectsCurrentGeneration() throws Exception {
    assertThat(indexer.handle(build("p1", null), delivery(1))).isInstanceOf(Outcome.Ack.class);

    assertThat(builder.builds).containsExactly("p1@3#1");
    assertThat(rows()).containsExactly("p1@3 ready 1 null");
  }

  @DatabaseTest
  void aPurgeDeletesTheProjectsRowsAndARepeatDeletesNothing() throws Exception {
    f.project("p2");
    indexer.handle(build("p1", 1L), delivery(1));
    indexer.handle(build("p1", 3L), delivery(1));
    indexer.handle(build("p2", 0L), delivery(1));
    assertThat(rows()).hasSize(3);

    Command purge = command(CommandType.INDEX_PURGE, "p1", null);
    assertThat(indexer.handle(purge, delivery(1))).isInstanceOf(Outcome.Ack.class);
    assertThat(rows()).containsExactly("p2@0 ready 1 null");
    assertThat(indexer.handle(purge, delivery(2))).isInstanceOf(Outcome.Ack.class);
    assertThat(rows()).containsExactly("p2@0 ready 1 null");
  }

  @DatabaseTest
  void aBuildForAnUnknownProjectIsRejectedWithoutABuild() throws Exception {
    Outcome outcome = indexer.handle(build("p-unknown", 1L), delivery(1));

    assertThat(outcome)
        .isInstanceOfSatisfying(
            Outcome.Reject.class,
            r ->
                assertThat(r.reason())
                    .contains("index.build")
                    .contains("unknown project p-unknown"));
    assertThat(builder.builds).isEmpty();
    assertThat(rows()).isEmpty();
  }

  @DatabaseTest
  void aGenerationAheadOfTheProjectOrNotAWholeNumberIsRejected() throws Exception {
    assertThat(indexer.handle(build("p1", 4L), delivery(1)))
        .isInstanceOfSatisfying(
            Outcome.Reject.class,
            r -> assertThat(r.reason()).contains("generation 4 is ahead").contains("3"));
    for (ObjectNode payload :
        List.of(
            JsonNodeFactory.instance.objectNode().put("generation", "three"),
            JsonNodeFactory.instance.objectNode().put("generation", 2.5),
            JsonNodeFactory.instance.objectNode().put("generation", -1))) {
      Command bad =
          Command.builder()
              .commandId("cmd_test_bad_generation")
              .commandType(CommandType.INDEX_BUILD)
              .projectId("p1")
              .createdAt(f.clock.instant())
              .payload(payload)
              .build();
      assertThat(indexer.handle(bad, delivery(1)))
          .as(payload.toString())
          .isInstanceOfSatisfying(
              Outcome.Reject.class,
              r -> assertThat(r.reason()).contains("payload generation must be a whole number"));
    }
    assertThat(builder.builds).isEmpty();
    assertThat(rows()).isEmpty();
  }

  @DatabaseTest
  void anArchivedProjectIsNotIndexed() throws Exception {
    f.lifecycle.projects().archive("p1").get();

    assertThat(indexer.handle(build("p1", null), delivery(1))).isInstanceOf(Outcome.Ack.class);
    assertThat(builder.builds).isEmpty();
    assertThat(rows()).isEmpty();
  }
}
