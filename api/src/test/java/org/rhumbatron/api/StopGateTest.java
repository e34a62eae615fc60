package org.rhumbatron.api;

import static org.assertj.core.api.Assertions.assertThat;

import io.javalin.Javalin;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A stopping node: the request it took runs to its end and is answered as usual, a request that
 * arrives after the stop began is 503 with Retry-After and the JSON error, and the stop returns
 * once the taken request is done.
 */
class StopGateTest {
  private final StopGate gate = new StopGate();
  private final CountDownLatch entered = new CountDownLatch(1);
  private final CountDownLatch release = new CountDownLatch(1);
  private final HttpClient http = HttpClient.newHttpClient();
  private Javalin app;

  @BeforeEach
  void start() {
    app = Javalin.create(config -> config.showJavalinBanner = false);
    ApiErrors.register(app);
    gate.mount(app);
    app.get(
        "/slow",
        ctx -> {
          entered.countDown();
          release.await();
          ctx.result("done");
        });
    app.get("/fast", ctx -> ctx.result("fast"));
    app.start("127.0.0.1", 0);
  }

  @AfterEach
  void stop() {
    release.countDown();
    app.stop();
  }

  @Test
  void theTakenRequestEndsAndALaterOneIs503WithRetryAfter() throws Exception {
    CompletableFuture<HttpResponse<String>> slow = get("/slow");
    entered.await();
    CompletableFuture<Integer> stopped =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                return gate.close("core node n1 is stopping", Duration.ofSeconds(30));
              } catch (InterruptedException e) {
                throw new IllegalStateException(e);
              }
            });

    // The gate refuses from the moment close began; wait for that, not for time.
    HttpResponse<String> later = get("/fast").get();
    while (later.statusCode() == 200) {
      later = get("/fast").get();
    }
    assertThat(later.statusCode()).isEqualTo(503);
    assertThat(later.headers().firstValue("Retry-After")).hasValue("1");
    assertThat(later.body()).isEqualTo("{\"error\":\"core node n1 is stopping\",\"field\":null}");
    assertThat(stopped).isNotDone();

    release.countDown();
    assertThat(slow.get().statusCode()).isEqualTo(200);
    assertThat(slow.get().body()).isEqualTo("done");
    assertThat(stopped.get()).as("requests still running when the stop returned").isZero();
  }

  private CompletableFuture<HttpResponse<String>> get(String path) {
    return http.sendAsync(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + app.port() + path)).build(),
        HttpResponse.BodyHandlers.ofString());
  }
}
