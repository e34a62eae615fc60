package org.rhumbatron.server;

import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import org.rhumbatron.platform.config.Settings;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code rhumbatron core}: runs the service until SIGTERM or SIGINT. */
@Command(name = "core", mixinStandardHelpOptions = true, description = "Run the core service.")
public final class CoreCommand implements Callable<Integer> {

  @Mixin CoreOptions options;

  @Option(
      names = "--nats-wait",
      arity = "1",
      paramLabel = "true|false",
      description =
          "With --nats: wait for a server that does not answer yet (true, the default of setting"
              + " nats.wait-at-start) or exit at once with an error (false).")
  String natsWait;

  @Override
  public Integer call() throws Exception {
    CoreConfig config = withNatsWait(options.toConfig(), natsWait);
    AtomicReference<CoreService> running = new AtomicReference<>();
    CountDownLatch stopped = closeOnExit(running);
    CoreService service = CoreService.start(config, running::set);
    service.awaitClose();
    stopped.await();
    return 0;
  }

  /** {@code config} with {@code --nats-wait} over its setting (validated like one), if given. */
  static CoreConfig withNatsWait(CoreConfig config, String natsWait) {
    if (natsWait == null) {
      return config;
    }
    return new CoreConfig(
        config.natsUrl(),
        config.dataDir(),
        config.database(),
        config.httpPort(),
        config.settings().with(Map.of(Settings.NATS_WAIT_AT_START.key(), natsWait)));
  }

  /**
   * A shutdown hook that closes the core in {@code running} (SIGTERM, Ctrl-C); the latch opens when
   * it did. In place before core says it is up, so a SIGTERM right after that stops it.
   */
  public static CountDownLatch closeOnExit(AtomicReference<CoreService> running) {
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  CoreService service = running.get();
                  if (service != null) {
                    service.close();
                  }
                  stopped.countDown();
                },
                "rhumbatron-shutdown"));
    return stopped;
  }
}
