package org.rhumbatron.api;

import io.javalin.Javalin;
import io.javalin.config.JavalinConfig;
import io.nats.client.Connection;
import java.io.IOException;
import java.io.InputStream;
import java.time.Clock;
import java.time.Duration;
import java.util.function.Supplier;
import org.rhumbatron.lifecycle.Lifecycle;
import org.rhumbatron.lifecycle.LifecycleOverview;
import org.rhumbatron.platform.cluster.DutyOwnership;
import org.rhumbatron.platform.cluster.OwnsEverything;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.secrets.SigningKeys;
import org.rhumbatron.router.catchup.ConsumerLags;
import org.rhumbatron.router.deadletter.DeadLetterOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Mounts the HTTP API on core's Javalin server (docs/api.md). */
public final class Api {
  private static final Logger log = LoggerFactory.getLogger(Api.class);
  private static final String OPENAPI = "openapi.json";

  private final Lifecycle lifecycle;
  private final DeadLetterOperator deadLetters;
  private final Database database;
  private final Supplier<Connection> nats;
  private final NatsGate natsGate;
  private final Credentials credentials;
  private final AuthFailures authFailures;
  private final ApiAuth auth;
  private final StopGate stopGate = new StopGate();
  private Supplier<ConsumerLags> lags = () -> null;
  private Supplier<DutyOwnership> ownership = OwnsEverything::single;
  private Supplier<ChartWindow> charts = () -> null;
  private Clock clock = Clock.systemUTC();
  private Duration webhookSecretOverlap = Duration.ofHours(24);

  /**
   * @param nats the NATS connection, null before core first connected
   * @param natsGate whether NATS can be used now (core may start before NATS answers)
   * @param access the operator token, whether reads need a credential, the rate per credential
   */
  public Api(
      Lifecycle lifecycle,
      DeadLetterOperator deadLetters,
      Database database,
      Supplier<Connection> nats,
      NatsGate natsGate,
      ApiAccess access) {
    this.lifecycle = lifecycle;
    this.deadLetters = deadLetters;
    this.database = database;
    this.nats = nats;
    this.natsGate = natsGate;
    this.credentials = new Credentials(database, access.clock());
    this.authFailures = new AuthFailures(access.clock());
    this.auth = new ApiAuth(access, credentials, authFailures);
  }

  /**
   * Where {@code /api/streams} reads the age of each event consumer's oldest unread Event: the
   * router's samples, null while core has no router.
   */
  public Api withLags(Supplier<ConsumerLags> lags) {
    this.lags = lags;
    return this;
  }

  /** Where {@code /api/cluster} reads the nodes and the duties' owners. */
  public Api withOwnership(DutyOwnership ownership) {
    this.ownership = () -> ownership;
    return this;
  }

  /** Where {@code /api/charts} reads the samples of the dashboard's charts. */
  public Api withCharts(ChartWindow charts) {
    this.charts = () -> charts;
    return this;
  }

  /**
   * The clock of the webhook secrets' times, and how long a replaced secret still signs ({@code
   * agents.webhook.secret-overlap}).
   */
  public Api withWebhookSecrets(Clock clock, Duration overlap) {
    this.clock = clock;
    this.webhookSecretOverlap = overlap;
    return this;
  }

  /** The refused requests by reason, for {@code /metrics}. */
  public AuthFailures authFailures() {
    return authFailures;
  }

  /** Whether any credential can pass: {@code api.token}, or a live credential in the database. */
  public boolean hasCredential() {
    return auth.configured() || credentials.anyLive();
  }

  /** The server's own limits: a body above {@link JsonBody#MAX_BYTES} is refused with 413. */
  public static void configure(JavalinConfig config) {
    config.http.maxRequestSize = JsonBody.MAX_BYTES;
    // A known path with another method is 405 with Allow, not 404 "no route" (docs/api.md).
    config.http.prefer405over404 = true;
  }

  public void mount(Javalin app) {
    if (!hasCredential()) {
      log.warn(ApiAuth.NO_TOKEN);
    }
    ApiErrors.register(app);
    ServerSpans.mount(app); // first: the span covers the gate and the token check
    stopGate.mount(app); // before the token check: a stopping node answers 503 to every request
    // On matched routes only: the route's template decides what it needs (Access).
    app.beforeMatched(auth::check);
    byte[] openapi = openapi();
    app.get(
        "/openapi.json", ctx -> ctx.status(200).contentType("application/json").result(openapi));
    LifecycleOverview overview = new LifecycleOverview(database);
    ProjectRoutes projects = new ProjectRoutes(lifecycle, overview, natsGate);
    new OperatorRoutes(database, nats, natsGate, lags).mount(app);
    projects.mount(app);
    ChangeRoutes changes = new ChangeRoutes(lifecycle, overview, projects, natsGate);
    changes.mount(app);
    new ChangeDetailRoutes(changes, overview, database).mount(app);
    new FeedRoutes(database, projects).mount(app);
    new DeadLetterRoutes(deadLetters, database, natsGate).mount(app);
    new AgentRoutes(lifecycle).mount(app);
    new WebhookSecretRoutes(new SigningKeys(database, clock), webhookSecretOverlap).mount(app);
    new TraceRoutes(database).mount(app);
    new ClusterRoutes(ownership).mount(app);
    new ChartRoutes(charts).mount(app);
    new DashboardRoutes().mount(app);
    new TokenRoutes(credentials).mount(app);
  }

  /**
   * From now on answers every request, on every path, with 503, {@code Retry-After} and {@code
   * why}; waits at most {@code within} for the requests already taken, and returns how many still
   * run.
   */
  public int stopTaking(String why, Duration within) throws InterruptedException {
    return stopGate.close(why, within);
  }

  static byte[] openapi() {
    try (InputStream in = Api.class.getResourceAsStream(OPENAPI)) {
      if (in == null) {
        throw new IllegalStateException("the jar lacks " + OPENAPI);
      }
      return in.readAllBytes();
    } catch (IOException e) {
      throw new IllegalStateException("cannot read " + OPENAPI, e);
    }
  }
}
