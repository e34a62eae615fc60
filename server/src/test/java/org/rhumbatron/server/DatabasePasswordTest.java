package org.rhumbatron.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.rhumbatron.platform.config.Settings;

/**
 * The PostgreSQL password comes from {@code database.password} (or its variable) or from {@code
 * database.password-file}, never from the URL. The test's PostgreSQL (127.0.0.1:5432) trusts every
 * local user, so a stand-in server asks for a cleartext password instead, records what the driver
 * sends, and refuses it: the password arrived, and the failed start does not show it.
 */
class DatabasePasswordTest {
  static final String PASSWORD = "db-pw-Hq27mV";

  @TempDir Path dir;
  ServerSocket listener;
  final List<String> received = new CopyOnWriteArrayList<>();
  Thread acceptor;

  @BeforeEach
  void standIn() throws IOException {
    listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    acceptor = new Thread(this::serve, "pg-stand-in");
    acceptor.setDaemon(true);
    acceptor.start();
  }

  @AfterEach
  void close() throws IOException {
    listener.close();
  }

  /** PostgreSQL's v3 protocol as far as the password: SSLRequest, startup, password, error. */
  private void serve() {
    while (!listener.isClosed()) {
      try (Socket s = listener.accept()) {
        DataInputStream in = new DataInputStream(s.getInputStream());
        DataOutputStream out = new DataOutputStream(s.getOutputStream());
        int length = in.readInt();
        int code = in.readInt();
        if (code == 80877103) { // SSLRequest: not here
          out.writeByte('N');
          out.flush();
          length = in.readInt();
          in.readInt();
        }
        in.readFully(new byte[length - 8]);
        out.writeByte('R');
        out.writeInt(8);
        out.writeInt(3); // AuthenticationCleartextPassword
        out.flush();
        in.readByte(); // 'p'
        byte[] password = new byte[in.readInt() - 4];
        in.readFully(password);
        received.add(new String(password, 0, password.length - 1, StandardCharsets.UTF_8));
        byte[] error = "SFATAL\0C28P01\0Mpassword authentication failed\0\0".getBytes();
        out.writeByte('E');
        out.writeInt(error.length + 4);
        out.write(error);
        out.flush();
      } catch (IOException e) {
        // the listener closed, or the driver hung up
      }
    }
  }

  private CoreConfig core(Settings settings) {
    String url = "jdbc:postgresql://127.0.0.1:" + listener.getLocalPort() + "/rt?user=core";
    return new CoreConfig(null, dir.resolve("data"), url, 0, settings);
  }

  @Test
  void thePasswordComesFromItsSettingItsVariableOrItsFileAndIsNotShown() throws Exception {
    Settings set = Settings.defaults().with(Map.of("database.password", PASSWORD));
    Settings variable =
        Settings.load(null, Map.of("RHUMBATRON_DATABASE_PASSWORD", PASSWORD + "-env"));
    Path file = dir.resolve("db-password");
    Files.writeString(file, PASSWORD + "-file\n");
    Settings fromFile = Settings.defaults().with(Map.of("database.password-file", file.toString()));
    for (Settings settings : List.of(set, variable, fromFile)) {
      assertThatThrownBy(() -> CoreService.start(core(settings)).close())
          .satisfies(
              e ->
                  assertThat(NatsCredentialsTest.messages(e))
                      .contains("password authentication failed")
                      .doesNotContain("Hq27mV"));
    }
    assertThat(received)
        .containsSubsequence(PASSWORD, PASSWORD + "-env", PASSWORD + "-file")
        .doesNotContain("");
  }
}
