package org.rhumbatron.testkit.nats;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Gives a test class one private {@link NatsCluster} of routed servers, started before its first
 * test and closed (every server killed, its store deleted) after its last, even when a test fails:
 *
 * <pre>
 * {@code @RegisterExtension static final NatsClusterExtension nats = NatsClusterExtension.of(3);}
 * </pre>
 */
public final class NatsClusterExtension implements BeforeAllCallback, AfterAllCallback {
  private final int size;
  private volatile NatsCluster cluster;

  private NatsClusterExtension(int size) {
    this.size = size;
  }

  /** A cluster of {@code size} servers per test class. */
  public static NatsClusterExtension of(int size) {
    return new NatsClusterExtension(size);
  }

  /** The class's cluster. */
  public NatsCluster cluster() {
    NatsCluster current = cluster;
    if (current == null) {
      throw new IllegalStateException(
          "no nats cluster: register the extension on a static field and call cluster() in a test");
    }
    return current;
  }

  @Override
  public void beforeAll(ExtensionContext context) {
    if (cluster == null) {
      cluster = NatsCluster.start(size);
    }
  }

  @Override
  public void afterAll(ExtensionContext context) {
    NatsCluster current = cluster;
    cluster = null;
    if (current != null) {
      current.close();
    }
  }
}
