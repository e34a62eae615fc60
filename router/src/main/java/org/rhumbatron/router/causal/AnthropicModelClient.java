package org.rhumbatron.router.causal;

import com.anthropic.client.AnthropicClient;
import com.anthropic.client.okhttp.AnthropicOkHttpClient;
import com.anthropic.core.JsonValue;
import com.anthropic.core.LogLevel;
import com.anthropic.core.Timeout;
import com.anthropic.errors.AnthropicInvalidDataException;
import com.anthropic.errors.AnthropicServiceException;
import com.anthropic.models.ErrorType;
import com.anthropic.models.messages.ContentBlock;
import com.anthropic.models.messages.Message;
import com.anthropic.models.messages.MessageCreateParams;
import com.anthropic.models.messages.Tool;
import com.anthropic.models.messages.ToolChoiceTool;
import com.anthropic.models.messages.ToolUseBlock;
import com.fasterxml.jackson.databind.JsonNode;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * Clef-flash's question as one Messages API call through the Anthropic Java SDK: the model must
 * call the tool {@value #TOOL} with {@code {decision: "wake"|"skip", probability: 0..1}}. No
 * retries: a slow or failed call wakes the Agent, and the next question is a new call.
 */
public final class AnthropicModelClient implements ModelClient, AutoCloseable {
  /** The one tool the model is forced to call. */
  public static final String TOOL = "route_wake";

  // A tool call of two fields needs a few dozen tokens; the cap keeps a runaway answer cheap.
  static final long MAX_TOKENS = 128;

  static final String SYSTEM_PROMPT =
      "You route Events for a team of coding agents. An agent works on a Task whose scope key"
          + " shares only a prefix with the resource key of a new Event. Decide whether the"
          + " agent must wake to look at the Event (wake) or can keep working undisturbed"
          + " (skip). Answer only by calling "
          + TOOL
          + " with your decision and the probability, from 0 to 1, that it is right.";

  private static final Tool ROUTE_WAKE =
      Tool.builder()
          .name(TOOL)
          .description("Wake the agent for this Event, or let it keep working.")
          .inputSchema(
              Tool.InputSchema.builder()
                  .properties(
                      Tool.InputSchema.Properties.builder()
                          .putAdditionalProperty(
                              "decision",
                              JsonValue.from(
                                  Map.of("type", "string", "enum", List.of("wake", "skip"))))
                          .putAdditionalProperty(
                              "probability",
                              JsonValue.from(Map.of("type", "number", "minimum", 0, "maximum", 1)))
                          .build())
                  .required(List.of("decision", "probability"))
                  .putAdditionalProperty("additionalProperties", JsonValue.from(false))
                  .build())
          .build();

  private final AnthropicClient client;
  private final String model;
  private final Duration timeout;

  /**
   * @param baseUrl the API's base URL, e.g. {@code https://api.anthropic.com}
   * @param apiKey sent as {@code x-api-key}; kept only inside the SDK client
   * @param timeout for the whole call, connect to last byte
   */
  public AnthropicModelClient(String baseUrl, String apiKey, String model, Duration timeout) {
    Objects.requireNonNull(baseUrl, "baseUrl");
    Objects.requireNonNull(apiKey, "apiKey");
    this.model = Objects.requireNonNull(model, "model");
    this.timeout = Objects.requireNonNull(timeout, "timeout");
    this.client =
        AnthropicOkHttpClient.builder()
            .baseUrl(baseUrl)
            .apiKey(apiKey)
            // The Messages API documents x-api-key; SDK 3.16 would send the key as a Bearer
            // token, and sends none of its own once this header is there.
            .putHeader("x-api-key", apiKey)
            .maxRetries(0)
            .timeout(
                Timeout.builder()
                    .connect(timeout)
                    .read(timeout)
                    .write(timeout)
                    .request(timeout)
                    .build())
            // ANTHROPIC_LOG=debug would print each request and response to stderr.
            .logLevel(LogLevel.OFF)
            .build();
  }

  @Override
  public ModelAnswer ask(ClefFlashQuestion q) {
    Message message;
    try {
      message = client.messages().create(params(q));
    } catch (AnthropicServiceException e) {
      String type = e.errorType().map(ErrorType::asString).orElse("no error type");
      throw new ModelCallException(
          ModelCallException.Failure.ERROR,
          q.eventId(),
          "status " + e.statusCode() + " (" + type + ")",
          e);
    } catch (AnthropicInvalidDataException e) {
      throw malformed(q, "the response is not a Messages API message", e);
    } catch (RuntimeException e) {
      if (timedOut(e)) {
        throw new ModelCallException(
            ModelCallException.Failure.TIMEOUT, q.eventId(), "no answer within " + timeout, e);
      }
      throw new ModelCallException(
          ModelCallException.Failure.ERROR, q.eventId(), e.getClass().getSimpleName(), e);
    }
    try {
      return answer(q, message);
    } catch (AnthropicInvalidDataException e) {
      throw malformed(q, "the message does not parse", e);
    }
  }

  MessageCreateParams params(ClefFlashQuestion q) {
    return MessageCreateParams.builder()
        .model(model)
        .maxTokens(MAX_TOKENS)
        .system(SYSTEM_PROMPT)
        .addTool(ROUTE_WAKE)
        .toolChoice(ToolChoiceTool.builder().name(TOOL).disableParallelToolUse(true).build())
        .addUserMessage(userPrompt(q))
        .build();
  }

  static String userPrompt(ClefFlashQuestion q) {
    return "Event id: "
        + q.eventId()
        + "\nEvent type: "
        + q.eventType().wireName()
        + "\nEvent resource key: "
        + q.eventKey()
        + "\nAgent scope key: "
        + q.agentKey()
        + "\nTask title: "
        + q.taskTitle();
  }

  /** The decision in the first {@value #TOOL} call; anything else is malformed. */
  private static ModelAnswer answer(ClefFlashQuestion q, Message message) {
    Optional<ToolUseBlock> call =
        message.content().stream()
            .filter(ContentBlock::isToolUse)
            .map(ContentBlock::asToolUse)
            .filter(t -> TOOL.equals(t.name()))
            .findFirst();
    if (call.isEmpty()) {
      throw malformed(q, "no " + TOOL + " tool call in the answer", null);
    }
    JsonNode input;
    try {
      input = call.get()._input().convert(JsonNode.class);
    } catch (RuntimeException e) {
      throw malformed(q, "the tool input does not convert", e);
    }
    if (input == null || !input.isObject()) {
      throw malformed(q, "the tool input is not an object", null);
    }
    JsonNode decision = input.get("decision");
    JsonNode probability = input.get("probability");
    if (decision == null
        || !decision.isTextual()
        || !("wake".equals(decision.asText()) || "skip".equals(decision.asText()))) {
      throw malformed(q, "decision must be \"wake\" or \"skip\"", null);
    }
    if (probability == null
        || !probability.isNumber()
        || !(probability.asDouble() >= 0 && probability.asDouble() <= 1)) {
      throw malformed(q, "probability must be a number in 0..1", null);
    }
    return new ModelAnswer(
        "wake".equals(decision.asText()) ? ModelRoute.Decision.WAKE : ModelRoute.Decision.SKIP,
        probability.asDouble());
  }

  private static ModelCallException malformed(ClefFlashQuestion q, String why, Throwable cause) {
    return new ModelCallException(ModelCallException.Failure.MALFORMED, q.eventId(), why, cause);
  }

  /** OkHttp reports its connect, read and call timeouts as InterruptedIOException. */
  private static boolean timedOut(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof InterruptedIOException) {
        return true;
      }
    }
    return false;
  }

  @Override
  public void close() {
    client.close();
  }
}
