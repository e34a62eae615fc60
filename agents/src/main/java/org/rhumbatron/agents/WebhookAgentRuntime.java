package org.rhumbatron.agents;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.opentelemetry.api.trace.Span;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.function.Supplier;
import org.rhumbatron.lifecycle.Lifecycle;
import org.rhumbatron.lifecycle.tasks.TaskInfo;
import org.rhumbatron.lifecycle.tasks.TaskRef;
import org.rhumbatron.platform.tracing.TraceContext;
import org.rhumbatron.protocol.Command;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Agents outside core: a relevant wake POSTs the Task as JSON to {@code agents.webhook.url}, and
 * the Agent reports every step through the HTTP API's agent endpoints (under the API base URL the
 * body names). {@link #start} returns when the Agent's server answered 2xx; a timeout, an error or
 * another status throws {@link AgentUnreachableException}, so the queue delivers the wake again.
 *
 * <p>The body: {@code kind} ({@code start}, or {@code woken} for a running Task woken by an Event),
 * {@code taskId}, {@code changeId}, {@code projectId}, {@code agentId}, {@code attempt}, {@code
 * title}, {@code scopes}, {@code apiBaseUrl}, {@code taskToken} (the bearer token of this attempt's
 * reports), and for {@code woken} the wake's {@code commandId} and {@code eventId}. Every POST is
 * signed ({@link WebhookSignatures}). A repeat of the same Task attempt is possible (a retried
 * wake): the Agent keeps it idempotent, as every report is.
 *
 * <p>When the Task's Change ends before the Task, core POSTs {@code kind} {@code stop} with the
 * Task's {@code taskId}, {@code changeId}, {@code projectId}, {@code agentId}, {@code attempt} and
 * {@code reason} ({@code change_failed}, {@code change_cancelled}, ...), once and without waiting
 * for the answer: the Agent stops, and any report it still sends is refused (409).
 */
public final class WebhookAgentRuntime implements AgentRuntime {
  private static final Logger log = LoggerFactory.getLogger(WebhookAgentRuntime.class);
  private static final ObjectMapper JSON = new ObjectMapper();

  private final Lifecycle lifecycle;
  private final URI url;
  private final Duration timeout;
  private final Supplier<String> apiBaseUrl;
  private final WebhookSignatures signatures;
  private final HttpClient client;

  /**
   * @param apiBaseUrl the API's base URL as the Agent should call it (known once HTTP is up)
   * @param signatures what signs each POST
   */
  public WebhookAgentRuntime(
      Lifecycle lifecycle,
      URI url,
      Duration timeout,
      Supplier<String> apiBaseUrl,
      WebhookSignatures signatures) {
    this.lifecycle = lifecycle;
    this.url = url;
    this.timeout = timeout;
    this.apiBaseUrl = apiBaseUrl;
    this.signatures = signatures;
    this.client = HttpClient.newBuilder().connectTimeout(timeout).build();
  }

  @Override
  public void start(TaskRef task) {
    post(body("start", task), task.taskId() + "_a" + task.attempt() + "_start");
  }

  @Override
  public void woken(TaskRef task, Command wake) {
    ObjectNode body = body("woken", task);
    body.put("commandId", wake.commandId());
    body.put("eventId", wake.payload().path("eventId").asText(null));
    post(body, wake.commandId());
  }

  @Override
  public void stop(TaskRef task, String reason) {
    ObjectNode body = JSON.createObjectNode();
    body.put("kind", "stop");
    body.put("taskId", task.taskId());
    body.put("changeId", task.changeId());
    body.put("projectId", task.projectId());
    body.put("agentId", task.agentId());
    body.put("attempt", task.attempt());
    body.put("reason", reason);
    String what = task.taskId() + " attempt " + task.attempt();
    Span span = WebhookSpans.start(url, body);
    client
        .sendAsync(
            request(body, task.taskId() + "_a" + task.attempt() + "_stop", span),
            HttpResponse.BodyHandlers.discarding())
        .whenComplete(
            (response, error) -> {
              WebhookSpans.end(span, response == null ? 0 : response.statusCode(), error);
              if (error != null) {
                log.info("stop of task {} did not reach {}: {}", what, url, error.toString());
              } else if (response.statusCode() / 100 != 2) {
                log.info("stop of task {}: {} answered {}", what, url, response.statusCode());
              }
            });
  }

  /**
   * The POST of {@code body}, signed as message {@code messageId} (the same for a retried wake, so
   * the Agent can tell a repeat), with the trace context of its span.
   */
  private HttpRequest request(ObjectNode body, String messageId, Span span) {
    String text = body.toString();
    HttpRequest.Builder request =
        HttpRequest.newBuilder(url)
            .timeout(timeout)
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(text));
    signatures.sign(messageId, text, request::header);
    TraceContext sent = TraceContext.of(span);
    if (sent != null) {
      sent.writeTo(request::header);
    }
    return request.build();
  }

  ObjectNode body(String kind, TaskRef task) {
    TaskInfo info = lifecycle.changes().task(task.taskId()).orElse(null);
    ObjectNode body = JSON.createObjectNode();
    body.put("kind", kind);
    body.put("taskId", task.taskId());
    body.put("changeId", task.changeId());
    body.put("projectId", task.projectId());
    body.put("agentId", task.agentId());
    body.put("attempt", task.attempt());
    body.put("title", info == null ? null : info.title());
    List<String> scopes = info == null ? List.of() : info.resourceScopes();
    scopes.forEach(body.putArray("scopes")::add);
    if (scopes.isEmpty()) {
      body.putArray("scopes");
    }
    String base = apiBaseUrl.get();
    if (base == null) {
      throw new AgentUnreachableException("the HTTP API is not up yet; task " + task.taskId());
    }
    body.put("apiBaseUrl", base);
    body.put("taskToken", lifecycle.taskTokens().issue(task));
    return body;
  }

  /** POSTs {@code body} under a "webhook" span, a child of the current one (the wake's handle). */
  private void post(ObjectNode body, String messageId) {
    Span span = WebhookSpans.start(url, body);
    HttpResponse<Void> response = null;
    Exception error = null;
    try {
      response = send(body, messageId, span);
    } catch (RuntimeException e) {
      error = e;
      throw e;
    } finally {
      WebhookSpans.end(span, response == null ? 0 : response.statusCode(), error);
    }
  }

  private HttpResponse<Void> send(ObjectNode body, String messageId, Span span) {
    String task = body.path("taskId").asText() + " attempt " + body.path("attempt").asInt();
    HttpResponse<Void> response;
    try {
      response =
          client.send(request(body, messageId, span), HttpResponse.BodyHandlers.discarding());
    } catch (IOException e) {
      throw new AgentUnreachableException(
          "webhook " + url + " for task " + task + ": " + e.getClass().getSimpleName(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AgentUnreachableException("interrupted while posting task " + task, e);
    }
    if (response.statusCode() / 100 != 2) {
      throw new AgentUnreachableException(
          "webhook " + url + " answered " + response.statusCode() + " for task " + task);
    }
    return response;
  }
}
