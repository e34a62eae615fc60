package org.rhumbatron.router.causal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.rhumbatron.router.causal.ClefFlashFixture.API_KEY;
import static org.rhumbatron.router.causal.ClefFlashFixture.question;
import static org.rhumbatron.router.causal.ClefFlashFixture.routeWake;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.rhumbatron.router.causal.ModelCallException.Failure;
import org.rhumbatron.router.causal.ModelRoute.Decision;
import org.rhumbatron.testkit.http.LocalMessagesApi;
import org.rhumbatron.testkit.http.LocalMessagesApi.Answer;

/** The SDK client alone: its answer, or a typed failure that names the Event and not the key. */
class AnthropicModelClientTest {
  private final LocalMessagesApi api = LocalMessagesApi.start();
  private final AnthropicModelClient client =
      new AnthropicModelClient(api.baseUrl(), API_KEY, "claude-haiku-4-5", Duration.ofMillis(400));

  @AfterEach
  void stop() {
    client.close();
    api.close();
  }

  @Test
  void theForcedToolCallIsTheAnswer() {
    api.enqueue(routeWake("skip", 0.75));
    assertThat(client.ask(question("evt_1"))).isEqualTo(new ModelAnswer(Decision.SKIP, 0.75));
  }

  @Test
  void eachFailureIsTypedAndNamesTheEventNotTheKey() {
    api.enqueue(
        Answer.error(401, "authentication_error", "invalid x-api-key"),
        Answer.error(529, "overloaded_error", "Overloaded"),
        Answer.garbage(),
        Answer.raw(200, "application/json", "{\"type\":\"message\",\"content\":7}"),
        Answer.text("wake"),
        routeWake("skip", 0.9).after(Duration.ofSeconds(5)));
    Failure[] expected = {
      Failure.ERROR,
      Failure.ERROR,
      Failure.MALFORMED,
      Failure.MALFORMED,
      Failure.MALFORMED,
      Failure.TIMEOUT
    };
    for (int i = 0; i < expected.length; i++) {
      ModelCallException e =
          catchThrowableOfType(ModelCallException.class, () -> client.ask(question("evt_fail")));
      assertThat(e).as("answer " + i).isNotNull();
      assertThat(e.failure()).as("answer " + i + ": " + e.getMessage()).isEqualTo(expected[i]);
      assertThat(e.eventId()).isEqualTo("evt_fail");
      assertThat(e.getMessage()).startsWith("clef-flash ").contains("evt_fail");
      StringWriter trace = new StringWriter();
      e.printStackTrace(new PrintWriter(trace));
      assertThat(trace.toString()).doesNotContain(API_KEY);
    }
    assertThat(api.requests()).isEqualTo(expected.length);
  }

  @Test
  void anErrorSaysItsStatusAndType() {
    api.enqueue(Answer.error(529, "overloaded_error", "Overloaded"));
    ModelCallException e =
        catchThrowableOfType(ModelCallException.class, () -> client.ask(question("evt_9")));
    assertThat(e.getMessage())
        .isEqualTo("clef-flash error for event evt_9: status 529 (overloaded_error)");
  }
}
