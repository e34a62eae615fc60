package org.rhumbatron.server;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;

final class PortProbe {
  private PortProbe() {}

  static boolean accepts(URI hostPort) {
    try (Socket socket = new Socket()) {
      socket.connect(new InetSocketAddress(hostPort.getHost(), hostPort.getPort()), 500);
      return true;
    } catch (IOException e) {
      return false;
    }
  }
}
