package org.rhumbatron.testkit.nats;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Gives tests a private {@link NatsServer}: one per test class by default, or one per test with
 * {@link #perTest()}. Use it as a field,
 *
 * <pre>{@code @RegisterExtension static NatsServerExtension nats = new NatsServerExtension();}
 * </pre>
 *
 * and call {@link #server()}, or with {@code @ExtendWith(NatsServerExtension.class)} and take a
 * {@link NatsServer} or {@link UniqueNames} as a test parameter. The server is closed (killed, its
 * store deleted) after the class or test even when the test fails. If a test leaves the shared
 * server killed, the next test gets it restarted on the same port and store.
 */
public final class NatsServerExtension
    implements BeforeAllCallback,
        AfterAllCallback,
        BeforeEachCallback,
        AfterEachCallback,
        ParameterResolver {
  private static final Logger log = LoggerFactory.getLogger(NatsServerExtension.class);
  private static final ExtensionContext.Namespace NAMESPACE =
      ExtensionContext.Namespace.create(NatsServerExtension.class);

  private final boolean perTest;
  private volatile NatsServer server;
  // The class context that started the per-class server; nested classes share it.
  private volatile String classOwner;

  /** One server per test class. */
  public NatsServerExtension() {
    this(false);
  }

  private NatsServerExtension(boolean perTest) {
    this.perTest = perTest;
  }

  /** A fresh server (empty store) for every test. */
  public static NatsServerExtension perTest() {
    return new NatsServerExtension(true);
  }

  /** The current test's server. */
  public NatsServer server() {
    NatsServer current = server;
    if (current == null) {
      throw new IllegalStateException(
          "no nats-server: call server() inside a test or lifecycle method");
    }
    return current;
  }

  public String url() {
    return server().url();
  }

  @Override
  public void beforeAll(ExtensionContext context) {
    if (!perTest && server == null) {
      server = NatsServer.start();
      classOwner = context.getUniqueId();
    }
  }

  @Override
  public void beforeEach(ExtensionContext context) {
    // Per test, or registered on an instance field (no beforeAll): the server lives for one test.
    if (server == null) {
      server = NatsServer.start();
    } else if (!server.isRunning()) {
      log.warn("an earlier test left {} stopped; restarting it", server);
      server.restart();
    }
    context
        .getStore(NAMESPACE)
        .put(UniqueNames.class, UniqueNames.forPrefix(context.getRequiredTestMethod().getName()));
  }

  @Override
  public void afterEach(ExtensionContext context) {
    if (classOwner == null) {
      closeServer();
    }
  }

  @Override
  public void afterAll(ExtensionContext context) {
    if (context.getUniqueId().equals(classOwner)) {
      closeServer();
      classOwner = null;
    }
  }

  private void closeServer() {
    NatsServer current = server;
    server = null;
    if (current != null) {
      current.close();
    }
  }

  @Override
  public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
    Class<?> type = parameter.getParameter().getType();
    return type == NatsServer.class || type == UniqueNames.class;
  }

  @Override
  public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
    Class<?> type = parameter.getParameter().getType();
    if (type == NatsServer.class) {
      return server();
    }
    UniqueNames names = context.getStore(NAMESPACE).get(UniqueNames.class, UniqueNames.class);
    return names != null ? names : UniqueNames.forPrefix(context.getDisplayName());
  }
}
