package org.rhumbatron.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.rhumbatron.platform.config.ReadAccess;

/** Which binds are loopback, when reads are open, and the public URL derived from the bind. */
class HttpListenTest {
  static HttpListen listen(String bind, boolean tls, ReadAccess reads, String publicUrl) {
    Path file = tls ? Path.of("/x.pem") : null;
    return new HttpListen(
        bind, 8080, file, file, Duration.ofSeconds(10), reads, false, false, publicUrl);
  }

  @Test
  void loopbackIsEveryLoopbackAddressAndNothingElse() {
    assertThat(listen("127.0.0.1", false, ReadAccess.AUTO, "").loopback()).isTrue();
    assertThat(listen("127.0.0.2", false, ReadAccess.AUTO, "").loopback()).isTrue();
    assertThat(listen("::1", false, ReadAccess.AUTO, "").loopback()).isTrue();
    assertThat(listen("localhost", false, ReadAccess.AUTO, "").loopback()).isTrue();
    assertThat(listen("0.0.0.0", false, ReadAccess.AUTO, "").loopback()).isFalse();
    assertThat(listen("::", false, ReadAccess.AUTO, "").loopback()).isFalse();
  }

  @Test
  void autoReadsAreOpenOnLoopbackOnly() {
    assertThat(listen("127.0.0.1", false, ReadAccess.AUTO, "").readsOpen()).isTrue();
    assertThat(listen("0.0.0.0", true, ReadAccess.AUTO, "").readsOpen()).isFalse();
    assertThat(listen("127.0.0.1", false, ReadAccess.CREDENTIAL, "").readsOpen()).isFalse();
    assertThat(listen("0.0.0.0", true, ReadAccess.OPEN, "").readsOpen()).isTrue();
  }

  @Test
  void thePublicUrlIsTheSettingElseSchemeBindAndPort() throws Exception {
    assertThat(listen("127.0.0.1", false, ReadAccess.AUTO, "").publicUrl(8080))
        .isEqualTo("http://127.0.0.1:8080");
    assertThat(listen("::1", true, ReadAccess.AUTO, "").publicUrl(8443))
        .isEqualTo("https://[::1]:8443");
    assertThat(listen("0.0.0.0", true, ReadAccess.AUTO, "").publicUrl(8443))
        .isEqualTo("https://" + InetAddress.getLocalHost().getHostName() + ":8443");
    assertThat(listen("0.0.0.0", true, ReadAccess.AUTO, "https://core.example:443").publicUrl(1))
        .isEqualTo("https://core.example:443");
  }

  @Test
  void theUpLineKeepsHttpPortFirstAndSaysHowReadsAreGuarded() {
    assertThat(listen("0.0.0.0", true, ReadAccess.AUTO, "https://core.example:1").describe(8443))
        .isEqualTo(
            "http port 8443 on 0.0.0.0 over TLS 1.2/1.3, reads need a credential, public URL"
                + " https://core.example:1");
  }
}
