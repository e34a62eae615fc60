package org.rhumbatron.app;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.rhumbatron.app.CliTest.Run;

/**
 * The CLI retries a 503 with {@code Retry-After} (a core node that is stopping) a few times, and
 * then gives up with the server's message; a server stands in for core to answer 503 on cue.
 */
class CliRetryTest {
  private static final String STREAMS = "{\"streams\":[{\"name\":\"COMMANDS\",\"messages\":7}]}";
  private static final String STOPPING = "{\"error\":\"core node n1 is stopping\",\"field\":null}";

  private final AtomicInteger requests = new AtomicInteger();
  private volatile int refusals;
  private HttpServer server;

  @BeforeEach
  void start() throws Exception {
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext(
        "/api/streams",
        exchange -> {
          boolean refuse = requests.incrementAndGet() <= refusals;
          byte[] body = (refuse ? STOPPING : STREAMS).getBytes(StandardCharsets.UTF_8);
          if (refuse) {
            exchange.getResponseHeaders().add("Retry-After", "0");
          }
          exchange.getResponseHeaders().add("Content-Type", "application/json");
          exchange.sendResponseHeaders(refuse ? 503 : 200, body.length);
          exchange.getResponseBody().write(body);
          exchange.close();
        });
    server.start();
  }

  @AfterEach
  void stop() {
    server.stop(0);
  }

  @Test
  void twoRefusalsAreRetriedAndTheThirdAnswerIsPrinted() {
    refusals = 2;
    Run r = CliTest.cli(env(), "streams", "--json");
    assertThat(r.code()).as(r.err()).isZero();
    assertThat(r.out()).contains("COMMANDS");
    assertThat(requests.get()).isEqualTo(3);
  }

  @Test
  void afterThreeRetriesTheRefusalIsTheAnswer() {
    refusals = 100;
    Run r = CliTest.cli(env(), "streams", "--json");
    assertThat(r.code()).isEqualTo(4);
    assertThat(r.err()).contains("HTTP 503").contains("is stopping");
    assertThat(requests.get()).isEqualTo(4);
  }

  private Map<String, String> env() {
    return Map.of("RHUMBATRON_URL", "http://127.0.0.1:" + server.getAddress().getPort());
  }
}
