package org.rhumbatron.testkit;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The fixtures a test starts one by one (the nodes of a several-core test), closed together after
 * it, last started first, even when the test fails. Registered last ({@link #LAST}), it closes them
 * before the extensions they use (a database, a nats-server) end theirs:
 *
 * <pre>{@code
 * @RegisterExtension
 * @Order(Fixtures.LAST)
 * final Fixtures<CoordinatorFixture> nodes = new Fixtures<>();
 * }</pre>
 */
public final class Fixtures<T extends AutoCloseable> implements AfterEachCallback {
  /** The {@code @Order} that registers it after the fields without one. */
  public static final int LAST = Integer.MAX_VALUE;

  private final List<T> started = new ArrayList<>();

  /** Keeps {@code fixture} for closing and returns it. */
  public synchronized T add(T fixture) {
    started.add(fixture);
    return fixture;
  }

  /** Closes every fixture; the first failure is thrown once all are closed. */
  @Override
  public synchronized void afterEach(ExtensionContext context) throws Exception {
    Exception first = null;
    for (int i = started.size() - 1; i >= 0; i--) {
      try {
        started.get(i).close();
      } catch (Exception e) {
        if (first == null) {
          first = e;
        } else {
          first.addSuppressed(e);
        }
      }
    }
    started.clear();
    if (first != null) {
      throw first;
    }
  }
}
