package org.rhumbatron.checker;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A TCP proxy on 127.0.0.1 that a fault check puts between core and NATS, to cut the link (every
 * connection closed, new ones refused), stall it (connections open, nothing forwarded) or slow it
 * (a byte rate per direction and connection), and heal it.
 */
public final class TcpProxy implements AutoCloseable {
  private enum Mode {
    OPEN,
    CUT,
    STALLED
  }

  private static final int BUFFER = 16 * 1024;
  private static final long PAUSE_MILLIS = 20;

  private final String targetHost;
  private final int targetPort;
  private final ServerSocket server;
  private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
  private final AtomicLong accepted = new AtomicLong();
  private final AtomicLong forwarded = new AtomicLong();
  private volatile Mode mode = Mode.OPEN;
  private volatile long bytesPerSecond;
  private volatile boolean closed;

  private TcpProxy(String targetHost, int targetPort, ServerSocket server) {
    this.targetHost = targetHost;
    this.targetPort = targetPort;
    this.server = server;
  }

  /** A proxy to {@code targetHost:targetPort} on a free port. */
  public static TcpProxy start(String targetHost, int targetPort) throws IOException {
    return start(targetHost, targetPort, 0);
  }

  public static TcpProxy start(String targetHost, int targetPort, int listenPort)
      throws IOException {
    ServerSocket server = new ServerSocket();
    server.setReuseAddress(true);
    server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), listenPort));
    TcpProxy proxy = new TcpProxy(targetHost, targetPort, server);
    daemon("tcp-proxy-accept-" + server.getLocalPort(), proxy::acceptLoop).start();
    return proxy;
  }

  public int port() {
    return server.getLocalPort();
  }

  public String natsUrl() {
    return "nats://127.0.0.1:" + port();
  }

  /** Closes every open connection and refuses new ones until {@link #heal}. */
  public void cut() {
    mode = Mode.CUT;
    sockets.forEach(TcpProxy::closeQuietly);
  }

  /** Keeps connections open and forwards nothing until {@link #heal}. */
  public void stall() {
    mode = Mode.STALLED;
  }

  /** At most {@code rate} bytes a second per direction of each connection; 0 = no limit. */
  public void slow(long rate) {
    bytesPerSecond = rate;
  }

  public void heal() {
    bytesPerSecond = 0;
    mode = Mode.OPEN;
  }

  public long connectionsAccepted() {
    return accepted.get();
  }

  public long bytesForwarded() {
    return forwarded.get();
  }

  private void acceptLoop() {
    while (!closed) {
      Socket client;
      try {
        client = server.accept();
      } catch (IOException e) {
        return;
      }
      if (mode == Mode.CUT) {
        closeQuietly(client);
        continue;
      }
      accepted.incrementAndGet();
      Socket upstream = new Socket();
      try {
        upstream.connect(new InetSocketAddress(targetHost, targetPort), 5_000);
      } catch (IOException e) {
        closeQuietly(client);
        closeQuietly(upstream);
        continue;
      }
      sockets.add(client);
      sockets.add(upstream);
      daemon("tcp-proxy-up-" + client.getPort(), () -> pump(client, upstream)).start();
      daemon("tcp-proxy-down-" + client.getPort(), () -> pump(upstream, client)).start();
    }
  }

  /** Copies {@code from} to {@code to} until either closes; then closes both. */
  private void pump(Socket from, Socket to) {
    byte[] buffer = new byte[BUFFER];
    try (InputStream in = from.getInputStream();
        OutputStream out = to.getOutputStream()) {
      while (true) {
        long rate = bytesPerSecond;
        int max = rate > 0 ? (int) Math.max(1, Math.min(BUFFER, rate / 10)) : BUFFER;
        int n = in.read(buffer, 0, max);
        if (n < 0) {
          break;
        }
        while (mode == Mode.STALLED && !closed) {
          Thread.sleep(PAUSE_MILLIS);
        }
        if (mode == Mode.CUT || closed) {
          break;
        }
        out.write(buffer, 0, n);
        out.flush();
        forwarded.addAndGet(n);
        if (rate > 0) {
          Thread.sleep(Math.max(1, n * 1000L / rate));
        }
      }
    } catch (IOException e) {
      // one side closed: the other follows
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      closeQuietly(from);
      closeQuietly(to);
      sockets.remove(from);
      sockets.remove(to);
    }
  }

  private static Thread daemon(String name, Runnable body) {
    Thread t = new Thread(body, name);
    t.setDaemon(true);
    return t;
  }

  private static void closeQuietly(Socket s) {
    try {
      s.close();
    } catch (IOException ignored) {
      // closing anyway
    }
  }

  @Override
  public void close() {
    closed = true;
    try {
      server.close();
    } catch (IOException ignored) {
      // closing anyway
    }
    sockets.forEach(TcpProxy::closeQuietly);
  }
}
