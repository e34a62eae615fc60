package org.rhumbatron.platform.config;

import static org.rhumbatron.platform.config.Setting.bool;
import static org.rhumbatron.platform.config.Setting.duration;
import static org.rhumbatron.platform.config.Setting.environmentVariableName;
import static org.rhumbatron.platform.config.Setting.host;
import static org.rhumbatron.platform.config.Setting.httpUrl;
import static org.rhumbatron.platform.config.Setting.intRange;
import static org.rhumbatron.platform.config.Setting.natsUrls;
import static org.rhumbatron.platform.config.Setting.nonNegativeDuration;
import static org.rhumbatron.platform.config.Setting.oneOf;
import static org.rhumbatron.platform.config.Setting.optionalFile;
import static org.rhumbatron.platform.config.Setting.optionalHttpUrl;
import static org.rhumbatron.platform.config.Setting.positiveInt;
import static org.rhumbatron.platform.config.Setting.probability;
import static org.rhumbatron.platform.config.Setting.secret;
import static org.rhumbatron.platform.config.Setting.text;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.rhumbatron.platform.bucket.BucketStore;
import org.rhumbatron.protocol.Queue;

/**
 * Every number of the seed (events-and-commands) as a named default, in one place. Values come from
 * the defaults, then a properties file, then environment variables {@code RHUMBATRON_<KEY>}; each
 * is validated when loaded, and a bad one is a {@link SettingsException} naming the key.
 */
public final class Settings {

  // Where core finds NATS when --nats is not given: a server's URL or a cluster's URLs, comma
  // separated. Empty (the default): core starts a private nats-server.
  public static final Setting<String> NATS_URL = register(natsUrls("nats.url"));

  // Not a seed number: whether core started with --nats waits for a server that does not answer
  // yet (the outbox keeps what commits meanwhile) or exits at once, as scripts may prefer.
  public static final Setting<Boolean> NATS_WAIT_AT_START =
      register(bool("nats.wait-at-start", true));

  // How core proves itself to NATS: a user and password, a token, or a creds file (a JWT and its
  // NKey seed), at most one kind; and the CA that signed the server's TLS certificate (empty: the
  // system's trust store, used when the server asks for TLS or the URL is tls://).
  public static final Setting<String> NATS_USER = register(Setting.optionalText("nats.user"));
  public static final Setting<String> NATS_PASSWORD = register(secret("nats.password"));
  public static final Setting<String> NATS_TOKEN = register(secret("nats.token"));
  public static final Setting<String> NATS_CREDS = register(Setting.readableFile("nats.creds"));
  public static final Setting<String> NATS_TLS_CA = register(Setting.readableFile("nats.tls.ca"));

  // The PostgreSQL password, kept out of the JDBC URL: given here (or
  // RHUMBATRON_DATABASE_PASSWORD),
  // or read from a file (a mounted secret), not both.
  public static final Setting<String> DATABASE_PASSWORD = register(secret("database.password"));
  public static final Setting<String> DATABASE_PASSWORD_FILE =
      register(Setting.readableFile("database.password-file"));

  // Event log topology ("Transactional outbox to the event log").
  public static final Setting<Duration> EVENT_STREAM_MAX_AGE =
      register(duration("events.max-age", Duration.ofDays(7)));
  public static final Setting<Duration> DUPLICATE_WINDOW =
      register(duration("streams.duplicate-window", Duration.ofHours(2)));
  // Not a seed number: how many servers of a NATS cluster hold a copy of each event stream,
  // COMMANDS and each bucket core makes; 3 on a three-server cluster, so
  // one server's death loses nothing. nats-server allows at most 5.
  public static final Setting<Integer> STREAM_REPLICAS =
      register(intRange("streams.replicas", 1, 1, 5));
  // Queues: "A message stays in the stream for at most 14 days."
  public static final Setting<Duration> COMMAND_STREAM_MAX_AGE =
      register(duration("commands.max-age", Duration.ofDays(14)));

  // Outbox ("max 100 rows per project"; backoff 1 s, 2 s, 4 s ... max 5 min; 10th attempt fails).
  public static final Setting<Integer> OUTBOX_PUBLISH_BATCH =
      register(positiveInt("outbox.publish-batch", 100));
  public static final Setting<Duration> OUTBOX_BACKOFF_INITIAL =
      register(duration("outbox.backoff-initial", Duration.ofSeconds(1)));
  public static final Setting<Duration> OUTBOX_BACKOFF_MAX =
      register(duration("outbox.backoff-max", Duration.ofMinutes(5)));
  public static final Setting<Integer> OUTBOX_MAX_ATTEMPTS =
      register(positiveInt("outbox.max-attempts", 10));
  // Published rows keep their stream sequence this long (lost-tail repair).
  public static final Setting<Duration> OUTBOX_KEEP_PUBLISHED =
      register(duration("outbox.keep-published", Duration.ofHours(24)));
  // How often the published rows past outbox.keep-published are deleted (all of them each time).
  public static final Setting<Duration> OUTBOX_PURGE_EVERY =
      register(duration("outbox.purge-every", Duration.ofMinutes(5)));
  // How long the publisher waits for a PubAck before it counts the send as failed.
  public static final Setting<Duration> OUTBOX_PUBLISH_TIMEOUT =
      register(duration("outbox.publish-timeout", Duration.ofSeconds(5)));
  // The actor alarm is the publisher's backstop; 1 min keeps it under the cap.
  public static final Setting<Duration> OUTBOX_ALARM_BACKSTOP =
      register(duration("outbox.alarm-backstop", Duration.ofMinutes(1)));
  // ResourceShardActors per project; a resource key's shard is fnv1a32(key) mod this.
  public static final Setting<Integer> SHARD_COUNT =
      register(positiveInt("actors.shard-count", 16));
  public static final Setting<Integer> ALARM_FIRES_PER_DAY =
      register(positiveInt("alarm.fires-per-day", 2_000));

  // Event router.
  public static final Setting<Integer> ROUTER_FETCH_BATCH =
      register(positiveInt("router.fetch-batch", 100));
  public static final Setting<Duration> ROUTER_NACK_DELAY =
      register(duration("router.nack-delay", Duration.ofSeconds(30)));
  public static final Setting<Duration> ROUTER_ACK_WAIT =
      register(duration("router.ack-wait", Duration.ofMinutes(5)));
  public static final Setting<Integer> ROUTER_CONSUMES_PER_RUN =
      register(positiveInt("router.consumes-per-run", 2));
  public static final Setting<Integer> APPLY_DELTA_CALLS_PER_RUN =
      register(positiveInt("router.apply-delta-calls-per-run", 15));
  public static final Setting<Integer> BATCH_FAILURE_LIMIT =
      register(positiveInt("router.batch-failure-limit", 5));
  public static final Setting<Integer> ANALYTICS_POINTS_PER_TICK =
      register(positiveInt("analytics.points-per-tick", 100));
  // The archiver and analytics keep up; not seed numbers. How often core samples
  // each stream's consumers (the lag metric and the catch-up trigger); a stream is read further
  // when its archiver or analytics has a full batch unread or an unread Event this old (so a
  // quiet stream's archive objects are not one Event each); batches of each per catch-up turn
  // before the turn queues itself behind the nudges again.
  public static final Setting<Duration> ROUTER_CATCH_UP_CHECK_EVERY =
      register(duration("router.catch-up-check-every", Duration.ofSeconds(5)));
  public static final Setting<Duration> ROUTER_CATCH_UP_AFTER =
      register(nonNegativeDuration("router.catch-up-after", Duration.ofSeconds(30)));
  public static final Setting<Integer> ROUTER_CATCH_UP_BATCHES =
      register(positiveInt("router.catch-up-batches", 4));
  // A WARN, at most once per behind-warn-every per stream, while a consumer's oldest unread Event
  // is older than behind-warn: the stream drops it at events.max-age.
  public static final Setting<Duration> ROUTER_BEHIND_WARN =
      register(duration("router.behind-warn", Duration.ofHours(1)));
  public static final Setting<Duration> ROUTER_BEHIND_WARN_EVERY =
      register(duration("router.behind-warn-every", Duration.ofMinutes(1)));
  public static final Setting<Duration> PROCESSED_EVENTS_KEEP =
      register(duration("processed-events.keep", Duration.ofDays(14)));
  public static final Setting<Integer> PROCESSED_EVENTS_PURGE_MAX =
      register(positiveInt("processed-events.purge-max", 5_000));
  // Retention of what grows with every Event (docs/architecture.md, Retention).
  // The feed row and the analytics point are effects of a claim: kept as long as the claim, so a
  // claim never outlives its effect and one purge run takes both of the same days.
  public static final Setting<Duration> PROJECT_EVENTS_KEEP =
      register(duration("project-events.keep", Duration.ofDays(14)));
  public static final Setting<Duration> PLATFORM_METRICS_KEEP =
      register(duration("platform-metrics.keep", Duration.ofDays(14)));
  // A closed dead letter's row is the dedupe of its command_id while COMMANDS may still hold it.
  public static final Setting<Duration> DEAD_LETTERS_KEEP_CLOSED =
      register(duration("dead-letters.keep-closed", Duration.ofDays(30)));
  // An ended Workflow's row is what makes a redelivered start command a repeat (instance id).
  public static final Setting<Duration> WORKFLOWS_KEEP_ENDED =
      register(duration("workflows.keep-ended", Duration.ofDays(30)));
  public static final Setting<Duration> ARCHIVE_EXPIRY =
      register(duration("archive.expiry", Duration.ofDays(365)));
  // The evidence bucket is a directory (default) or a NATS object store.
  public static final Setting<BucketStore> BUCKET_STORE =
      register(oneOf("bucket.store", BucketStore.DIRECTORY));

  // Sweep housekeeping.
  public static final Setting<Integer> DAILY_TICK_HOUR_UTC =
      register(intRange("maintenance.daily-hour-utc", 4, 0, 23));
  public static final Setting<Integer> DAILY_TICK_MINUTE_UTC =
      register(intRange("maintenance.daily-minute-utc", 17, 0, 59));
  public static final Setting<Integer> MAINTENANCE_EVERY_MINUTES =
      register(intRange("maintenance.every-minutes", 5, 1, 60));
  public static final Setting<Integer> MAINTENANCE_MINUTE_OFFSET =
      register(intRange("maintenance.minute-offset", 4, 0, 59));
  public static final Setting<Integer> DAILY_PROJECTS_MAX =
      register(positiveInt("maintenance.daily-projects-max", 10));
  public static final Setting<Duration> RELEASE_RECOVER_AFTER =
      register(duration("maintenance.release-recover-after", Duration.ofMinutes(45)));
  public static final Setting<Integer> RELEASE_RECOVER_MAX =
      register(positiveInt("maintenance.release-recover-max", 10));
  public static final Setting<Duration> SETTLE_QUIET_MIN =
      register(duration("maintenance.settle-quiet-min", Duration.ofMinutes(3)));
  public static final Setting<Duration> SETTLE_QUIET_MAX =
      register(duration("maintenance.settle-quiet-max", Duration.ofHours(6)));
  public static final Setting<Integer> SETTLE_MAX =
      register(positiveInt("maintenance.settle-max", 10));
  public static final Setting<Integer> INDEX_PURGE_MAX =
      register(positiveInt("maintenance.index-purge-max", 10));

  // Causal routing.
  public static final Setting<Integer> CLEF_FLASH_CALLS_PER_DAY =
      register(positiveInt("causal.clef-flash-calls-per-day", 200));
  public static final Setting<Double> CLEF_FLASH_ABSTAIN_BELOW =
      register(probability("causal.clef-flash-abstain-below", 0.7));
  // Clef-flash's one Messages API call: model, endpoint and a short timeout (a late answer wakes).
  // The key is read from the environment variable named here, never from a settings file.
  public static final Setting<String> CLEF_FLASH_MODEL =
      register(text("causal.clef-flash-model", "claude-haiku-4-5"));
  public static final Setting<String> CLEF_FLASH_BASE_URL =
      register(httpUrl("causal.clef-flash-base-url", "https://api.anthropic.com"));
  public static final Setting<Duration> CLEF_FLASH_TIMEOUT =
      register(duration("causal.clef-flash-timeout", Duration.ofSeconds(2)));
  public static final Setting<String> CLEF_FLASH_API_KEY_ENV =
      register(environmentVariableName("causal.clef-flash-api-key-env", "ANTHROPIC_API_KEY"));
  public static final Setting<Integer> COMMANDS_PER_CHANGE_PER_DAY =
      register(positiveInt("causal.commands-per-change-per-day", 1_000));
  // How long an overlap wake not yet handled holds back the next overlap wake of its Task attempt:
  // the agent-wakeups queue's ack wait, past which the wake is in a retry. 0 sends every wake.
  public static final Setting<Duration> WAKE_PENDING_WINDOW =
      register(nonNegativeDuration("causal.wake-pending-window", Duration.ofSeconds(30)));
  public static final Setting<Integer> AGENTS_PER_CHANGE =
      register(positiveInt("changes.agents-per-change", 8));

  // Queues.
  // The seed extends a held batch every 30 s; read here as a period short enough that the ack wait
  // (three periods) brings a dead or paused node's Commands back to a live one within seconds.
  public static final Setting<Duration> ACK_EXTEND_EVERY =
      register(duration("queues.ack-extend-every", Duration.ofSeconds(2)));
  public static final Setting<Duration> MAX_HOLD =
      register(duration("queues.max-hold", Duration.ofMinutes(15)));
  // Not a seed number: the consumer's ack wait, three extension periods, so one late or lost
  // inProgress (a 2 s stall) does not redeliver a message that a handler still holds, while a
  // killed node's messages come back this soon.
  public static final Setting<Duration> QUEUE_ACK_WAIT =
      register(duration("queues.ack-wait", Duration.ofSeconds(6)));
  public static final Setting<Integer> INTEGRATION_MAX_DELIVERIES =
      register(positiveInt("integration.max-deliveries", 4));
  public static final Setting<Duration> INTEGRATION_MORE_WORK_DELAY =
      register(duration("integration.more-work-delay", Duration.ofSeconds(10)));
  public static final Setting<Duration> INTEGRATION_CONFLICT_REVIEW_DELAY =
      register(duration("integration.conflict-review-delay", Duration.ofSeconds(45)));
  // Not a seed number: how long an integration handler waits for one lifecycle step or send.
  public static final Setting<Duration> INTEGRATION_STEP_TIMEOUT =
      register(duration("integration.step-timeout", Duration.ofSeconds(30)));

  // Batch, concurrency, retries and retry delay of each queue's consumer q-<queue>, defaults from
  // the seed's QUEUE_CONSUMERS table that protocol's Queue declares.
  static {
    for (Queue queue : Queue.values()) {
      SettingRegistry.registerQueueRow(queue);
    }
  }

  // The Change lifecycle. Not seed numbers: how often a failed Task runs
  // again before change.settle fails its Change, and how large a work graph may be.
  public static final Setting<Integer> TASK_ATTEMPTS =
      register(positiveInt("changes.task-attempts", 3));
  // How many Candidates of a Change verification may reject before change.settle fails it; an
  // earlier rejection sends the Change back to work.
  public static final Setting<Integer> VERIFICATION_ATTEMPTS =
      register(positiveInt("changes.verification-attempts", 2));
  public static final Setting<Integer> TASKS_PER_CHANGE_MAX =
      register(positiveInt("changes.tasks-max", 500));
  // How long a verifying Change may stay quiet without a live Candidate (its candidate.create, or
  // the rebase of its stale one, lost) before change.settle sends candidate.create again.
  public static final Setting<Duration> CANDIDATE_MISSING_AFTER =
      register(duration("changes.candidate-missing-after", Duration.ofMinutes(5)));
  // A bounded integration command (forks.sweep, project.cleanup) handles this many rows per
  // delivery and asks for another delivery when there are more.
  public static final Setting<Integer> INTEGRATION_ROWS_PER_DELIVERY =
      register(positiveInt("integration.rows-per-delivery", 10));
  // How long a claim holds before its shard's alarm expires it (claim.expired).
  public static final Setting<Duration> CLAIM_TTL =
      register(duration("agents.claim-ttl", Duration.ofMinutes(10)));
  // The simulated agent runtime: time per step, share of Task attempts that fail, and the seed
  // that makes a run reproducible.
  public static final Setting<Duration> SIMULATED_STEP_DELAY =
      register(nonNegativeDuration("agents.simulated.step-delay", Duration.ofMillis(20)));
  public static final Setting<Double> SIMULATED_FAILURE_RATE =
      register(probability("agents.simulated.failure-rate", 0.0));
  public static final Setting<Integer> SIMULATED_SEED =
      register(intRange("agents.simulated.seed", 1, 0, Integer.MAX_VALUE));

  // Where a relevant wake goes: the simulated Agents in core, or a webhook POST to agents outside
  // it, which answer through the HTTP API's agent endpoints; a failed POST is retried by the queue.
  public static final Setting<AgentRuntimeKind> AGENT_RUNTIME =
      register(oneOf("agents.runtime", AgentRuntimeKind.SIMULATED));
  public static final Setting<String> AGENT_WEBHOOK_URL =
      register(optionalHttpUrl("agents.webhook.url"));
  public static final Setting<Duration> AGENT_WEBHOOK_TIMEOUT =
      register(duration("agents.webhook.timeout", Duration.ofSeconds(10)));
  // When a new webhook secret is made, how long the one before it still signs (both do meanwhile).
  public static final Setting<Duration> AGENT_WEBHOOK_SECRET_OVERLAP =
      register(duration("agents.webhook.secret-overlap", Duration.ofHours(24)));
  // A task token lives until its attempt ends, at most this long (a later wake brings a new one);
  // its signing key is replaced after key-rotation and checks for one max-age more.
  public static final Setting<Duration> TASK_TOKEN_MAX_AGE =
      register(duration("agents.task-token.max-age", Duration.ofHours(24)));
  public static final Setting<Duration> TASK_TOKEN_KEY_ROTATION =
      register(duration("agents.task-token.key-rotation", Duration.ofDays(7)));

  // The HTTP API: the bearer token its writes need (empty: none, and every write is refused).
  public static final Setting<String> API_TOKEN = register(secret("api.token"));
  // Whether reads need a credential: auto keeps them open on a loopback bind only.
  public static final Setting<ReadAccess> API_READS = register(oneOf("api.reads", ReadAccess.AUTO));
  // Requests per second one credential (or one address, for open reads) may make; a burst of
  // one second's worth passes at once. A credential may carry its own.
  public static final Setting<Integer> API_RATE_LIMIT =
      register(positiveInt("api.rate-limit", 200));

  // Where the HTTP server listens, and the base URL Agents and webhooks are told (empty: derived
  // from the bind, the port and TLS). A bind other than loopback needs TLS and closed reads, or
  // http.insecure=true for a private network.
  public static final Setting<String> HTTP_BIND = register(host("http.bind", "127.0.0.1"));
  public static final Setting<String> HTTP_PUBLIC_URL =
      register(optionalHttpUrl("http.public-url"));
  public static final Setting<Boolean> HTTP_INSECURE = register(bool("http.insecure", false));
  // TLS: PEM files of the certificate (its chain may follow) and of its private key (PKCS#8 or
  // PKCS#1 RSA), read again when they change, checked this often.
  public static final Setting<String> HTTP_TLS_CERT = register(optionalFile("http.tls.cert"));
  public static final Setting<String> HTTP_TLS_KEY = register(optionalFile("http.tls.key"));
  public static final Setting<Duration> HTTP_TLS_CHECK_EVERY =
      register(duration("http.tls.check-every", Duration.ofSeconds(10)));
  // GET /metrics needs a reader credential too (else it stays open for the scraper).
  public static final Setting<Boolean> HTTP_METRICS_AUTH =
      register(bool("http.metrics-auth", false));

  // Traces (OpenTelemetry, W3C trace context): sent over OTLP/HTTP to this collector's base URL
  // (spans to <url>/v1/traces); empty: none are recorded or sent, the context still passes on.
  public static final Setting<String> OTEL_ENDPOINT =
      register(optionalHttpUrl("otel.exporter.otlp.endpoint"));
  public static final Setting<String> OTEL_SERVICE_NAME =
      register(text("otel.service.name", "rhumbatron-core"));

  // The simulated verifier: the share of Candidates it passes, and how long a verification takes.
  public static final Setting<Double> SIMULATED_VERIFIER_PASS_RATE =
      register(probability("verifier.simulated.pass-rate", 1.0));
  public static final Setting<Duration> SIMULATED_VERIFIER_DURATION =
      register(nonNegativeDuration("verifier.simulated.duration", Duration.ofMillis(50)));
  // The simulated releaser: how long putting a promoted generation live takes.
  public static final Setting<Duration> SIMULATED_RELEASE_DURATION =
      register(nonNegativeDuration("release.simulated.duration", Duration.ofMillis(50)));
  // The simulated index builder: how long a build takes, and the share of build attempts that
  // fail (drawn per attempt, so a retry can succeed).
  public static final Setting<Duration> SIMULATED_INDEX_DURATION =
      register(nonNegativeDuration("indexer.simulated.duration", Duration.ofMillis(20)));
  public static final Setting<Double> SIMULATED_INDEX_FAILURE_RATE =
      register(probability("indexer.simulated.failure-rate", 0.0));
  // The demo's and the benchmarks' stand-in for the operator: a verified Change is approved at
  // once.
  public static final Setting<Boolean> AUTO_APPROVE = register(bool("changes.auto-approve", false));
  // Durable Workflows: how often a failing step runs before its instance fails, and the pause.
  public static final Setting<Integer> WORKFLOW_STEP_TRIES =
      register(positiveInt("workflows.step-tries", 3));
  public static final Setting<Duration> WORKFLOW_RETRY_PAUSE =
      register(duration("workflows.retry-pause", Duration.ofSeconds(1)));

  // Several cores on one PostgreSQL database: the node's id (empty: a fresh one per
  // start), how often it writes its heartbeat and renews its leases, how long a lease and a
  // heartbeat count on the database's clock, and how often it looks for duties to take.
  public static final Setting<String> CLUSTER_NODE_ID =
      register(Setting.optionalName("cluster.node-id"));
  public static final Setting<Duration> CLUSTER_HEARTBEAT =
      register(duration("cluster.heartbeat", Duration.ofSeconds(1)));
  public static final Setting<Duration> CLUSTER_LEASE =
      register(duration("cluster.lease", Duration.ofSeconds(6)));
  public static final Setting<Duration> CLUSTER_POLL =
      register(duration("cluster.poll", Duration.ofMillis(500)));

  /** The settings of one row of the consumers table. */
  public record QueueRow(
      Queue queue,
      Setting<Integer> batchSize,
      Setting<Integer> concurrency,
      Setting<Integer> retries,
      Setting<Duration> retryDelay) {}

  /** The consumers-table settings of {@code queue}. */
  public static QueueRow queueRow(Queue queue) {
    return SettingRegistry.queueRow(queue);
  }

  private static <T> Setting<T> register(Setting<T> setting) {
    return SettingRegistry.register(setting);
  }

  /** Every known setting, in declaration order. */
  public static List<Setting<?>> all() {
    return SettingRegistry.all();
  }

  private final Map<Setting<?>, Object> values;

  private Settings(Map<Setting<?>, Object> values) {
    this.values = Map.copyOf(values);
  }

  /** The seed's defaults. */
  public static Settings defaults() {
    return new Settings(Map.of());
  }

  /**
   * Defaults, then {@code file} (a properties file, may be null), then {@code env} entries named
   * {@code RHUMBATRON_<KEY>}. An unknown key in the file is an error, so a typo does not pass.
   */
  public static Settings load(Path file, Map<String, String> env) {
    return load(defaults(), file, env);
  }

  /** As {@link #load(Path, Map)} over {@code base} instead of the defaults (the demo's). */
  public static Settings load(Settings base, Path file, Map<String, String> env) {
    return base.with(SettingsSources.raw(file, env, all()));
  }

  /** A copy with the given raw key/value overrides, each parsed and validated. */
  public Settings with(Map<String, String> overrides) {
    Map<Setting<?>, Object> next = new HashMap<>(values);
    next.putAll(SettingsSources.parse(overrides, all()));
    return checked(next);
  }

  /** A copy with one typed override (tests use this). */
  public <T> Settings with(Setting<T> setting, T value) {
    if (!setting.valid().test(value)) {
      throw new SettingsException(
          setting.key(), setting.shown(value) + " is out of range: " + setting.rule());
    }
    Map<Setting<?>, Object> next = new HashMap<>(values);
    next.put(setting, value);
    return checked(next);
  }

  private static Settings checked(Map<Setting<?>, Object> values) {
    Settings result = new Settings(values);
    SettingsRules.check(result);
    return result;
  }

  @SuppressWarnings("unchecked")
  public <T> T get(Setting<T> setting) {
    Object value = values.get(setting);
    return value == null ? setting.defaultValue() : (T) value;
  }

  /** Every key with its value, for logging at start and for {@code /healthz}-style dumps. */
  public Map<String, Object> describe() {
    Map<String, Object> out = new LinkedHashMap<>();
    for (Setting<?> s : all()) {
      out.put(s.key(), s.echoesValue() ? get(s) : "(hidden)");
    }
    return out;
  }
}
