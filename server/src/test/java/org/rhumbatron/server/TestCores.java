package org.rhumbatron.server;

import java.nio.file.Path;
import java.util.Map;
import org.rhumbatron.platform.config.Settings;

/** Core as the API, CLI and dashboard tests run it: quick simulated agents and verifier. */
public final class TestCores {
  private TestCores() {}

  /** Core on {@code natsUrl} and {@code dbUrl}, its API behind {@code token}, on a free port. */
  public static CoreService withToken(String natsUrl, Path data, String dbUrl, String token)
      throws Exception {
    Settings settings =
        Settings.defaults()
            .with(
                Map.of(
                    "agents.simulated.step-delay", "5ms",
                    "verifier.simulated.duration", "0ms",
                    "release.simulated.duration", "0ms",
                    "api.token", token));
    return CoreService.start(new CoreConfig(natsUrl, data, dbUrl, 0, settings));
  }
}
