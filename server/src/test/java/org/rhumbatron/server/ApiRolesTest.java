package org.rhumbatron.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.javalin.http.HandlerType;
import java.net.URI;
import java.net.http.HttpRequest;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.rhumbatron.api.Access;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.server.ApiClient.Answer;
import org.rhumbatron.testkit.db.DatabaseExtension;
import org.rhumbatron.testkit.nats.NatsServerExtension;

/**
 * Walks {@code openapi.json}: every operation names its least role ({@code x-role}), the server's
 * rule agrees, and with reads closed each role is let in exactly where that role reaches and
 * refused elsewhere (401 without a credential, 403 with one whose role may not).
 */
class ApiRolesTest {
  static final String TOKEN = "roles-operator-1";
  static final Set<String> METHODS = Set.of("get", "post", "put", "patch", "delete");
  static final List<String> ROLES = List.of("public", "reader", "agent", "operator");

  @RegisterExtension static final NatsServerExtension nats = new NatsServerExtension();
  @RegisterExtension static final DatabaseExtension db = DatabaseExtension.sqlite();
  @TempDir static Path data;

  static CoreService core;
  static ApiClient operator;
  static Map<String, ApiClient> callers;

  @BeforeAll
  static void startCore() throws Exception {
    Settings settings =
        Settings.defaults()
            .with(
                Map.of(
                    "agents.simulated.step-delay", "5ms",
                    "api.token", TOKEN,
                    "api.reads", "credential"));
    core = CoreService.start(new CoreConfig(nats.url(), data, db.database().url(), 0, settings));
    operator = ApiClient.of(core, TOKEN);
    callers =
        Map.of(
            "public", operator.withToken(null),
            "reader", operator.withToken(create("reader", "roles reader")),
            "agent", operator.withToken(create("agent", "roles agent")),
            "operator", operator);
  }

  @AfterAll
  static void stopCore() {
    if (core != null) {
      core.close();
    }
  }

  static String create(String role, String name) throws Exception {
    Answer created = operator.post("/api/tokens", Map.of("role", role, "name", name));
    assertThat(created.status()).as(created.text()).isEqualTo(201);
    return created.body().path("token").asText();
  }

  /** Each documented operation: method, path template and its x-role. */
  record Operation(String method, String path, String role) {
    String concrete() {
      return path.replace("{asset}", "app.js").replaceAll("\\{[^}]+}", "x-none");
    }
  }

  static List<Operation> operations() throws Exception {
    JsonNode paths = operator.get("/openapi.json").body().path("paths");
    List<Operation> ops = new ArrayList<>();
    for (Iterator<Map.Entry<String, JsonNode>> it = paths.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> path = it.next();
      for (Iterator<Map.Entry<String, JsonNode>> m = path.getValue().fields(); m.hasNext(); ) {
        Map.Entry<String, JsonNode> op = m.next();
        if (METHODS.contains(op.getKey())) {
          ops.add(new Operation(op.getKey(), path.getKey(), op.getValue().path("x-role").asText()));
        }
      }
    }
    return ops;
  }

  @Test
  void everyOperationNamesTheRoleTheServerAsksFor() throws Exception {
    List<Operation> ops = operations();
    assertThat(ops).hasSizeGreaterThan(40);
    for (Operation op : ops) {
      assertThat(op.role()).as(op + " has no x-role").isIn(ROLES);
      HandlerType method = HandlerType.valueOf(op.method().toUpperCase(Locale.ROOT));
      assertThat(Access.of(method, op.path(), false).leastRole())
          .as(op.toString())
          .isEqualTo(op.role());
    }
  }

  @Test
  void eachRoleIsLetInWhereItReachesAndRefusedElsewhere() throws Exception {
    List<String> wrong = new ArrayList<>();
    for (Operation op : operations()) {
      for (String caller : ROLES) {
        Answer a = send(callers.get(caller), op);
        boolean admitted = a.status() != 401 && a.status() != 403;
        boolean shouldBe = reaches(caller, op.role());
        int refusal = caller.equals("public") ? 401 : 403;
        if (admitted != shouldBe || (!shouldBe && a.status() != refusal)) {
          wrong.add(
              caller
                  + " "
                  + op.method()
                  + " "
                  + op.concrete()
                  + " -> "
                  + a.status()
                  + " "
                  + a.error());
        }
      }
    }
    assertThat(wrong).isEmpty();
  }

  @Test
  void aTaskTokenPassesTheReportRoutesAloneForThemToCheck() throws Exception {
    ApiClient task = operator.withToken("rtk_not-checked-here");
    for (Operation op : operations()) {
      Answer a = send(task, op);
      if (op.role().equals("agent")) {
        // Past the role check; the report route itself decides on the token.
        assertThat(a.status()).as(op.toString()).isNotEqualTo(401);
      } else if (!op.role().equals("public")) {
        assertThat(a.status()).as(op + " " + a.text()).isEqualTo(403);
      }
    }
  }

  /** Whether a caller of role {@code caller} may call what needs {@code least}. */
  static boolean reaches(String caller, String least) {
    return switch (least) {
      case "public" -> true;
      case "reader" -> !caller.equals("public");
      case "agent" -> caller.equals("agent") || caller.equals("operator");
      default -> caller.equals("operator");
    };
  }

  static Answer send(ApiClient client, Operation op) throws Exception {
    String method = op.method().toUpperCase(Locale.ROOT);
    HttpRequest.BodyPublisher body =
        method.equals("GET")
            ? HttpRequest.BodyPublishers.noBody()
            : HttpRequest.BodyPublishers.ofString("{}");
    return client.send(
        HttpRequest.newBuilder(URI.create(client.base() + op.concrete()))
            .header("Content-Type", "application/json")
            .method(method, body));
  }
}
