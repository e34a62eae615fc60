package org.rhumbatron.app;

import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** {@code rhumbatron core}: runs the service until SIGTERM or SIGINT. */
@Command(name = "core", mixinStandardHelpOptions = true, description = "Run the core service.")
final class CoreCommand implements Callable<Integer> {

  @Mixin CoreOptions options;

  @Override
  public Integer call() throws Exception {
    CoreConfig config = options.toConfig();
    AtomicReference<CoreService> running = new AtomicReference<>();
    CountDownLatch stopped = closeOnExit(running);
    CoreService service = CoreService.start(config, running::set);
    service.awaitClose();
    stopped.await();
    return 0;
  }

  /**
   * A shutdown hook that closes the core in {@code running} (SIGTERM, Ctrl-C); the latch opens when
   * it did. In place before core says it is up, so a SIGTERM right after that stops it.
   */
  static CountDownLatch closeOnExit(AtomicReference<CoreService> running) {
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

  static Path defaultData() {
    return Path.of("data");
  }
}
