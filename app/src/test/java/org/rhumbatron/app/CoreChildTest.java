package org.rhumbatron.app;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.rhumbatron.server.CoreChild;

/** The server names the launcher by a string, as it sits below app/; the name must stay right. */
class CoreChildTest {
  @Test
  void childCoresRunTheLauncher() {
    assertThat(CoreChild.LAUNCHER).isEqualTo(Main.class.getName());
  }
}
