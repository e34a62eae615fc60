package org.rhumbatron.app;

import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** {@code rhumbatron core}: runs the service until SIGTERM or SIGINT. */
@Command(name = "core", mixinStandardHelpOptions = true, description = "Run the core service.")
final class CoreCommand implements Callable<Integer> {

  @Mixin CoreOptions options;

  @Override
  public Integer call() throws Exception {
    CoreService service = CoreService.start(options.toConfig());
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  service.close();
                  stopped.countDown();
                },
                "rhumbatron-shutdown"));
    service.awaitClose();
    stopped.await();
    return 0;
  }

  static Path defaultData() {
    return Path.of("data");
  }
}
