package org.rhumbatron.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The digests every stable id rests on: the published SHA-256 test vectors (FIPS 180-2). */
class Sha256Test {

  @Test
  void givesThePublishedDigests() {
    assertThat(Sha256.hex(""))
        .isEqualTo("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    assertThat(Sha256.hex("abc"))
        .isEqualTo("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    assertThat(Sha256.hex("abc", 4)).isEqualTo("ba7816bf");
  }

  @Test
  void aDigestLeftHalfFedDoesNotLeakIntoTheNext() {
    Sha256.digest().update("left over".getBytes(StandardCharsets.UTF_8));
    assertThat(Sha256.hex("abc"))
        .isEqualTo("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    var parts = Sha256.digest();
    for (String part : List.of("a", "b", "c")) {
      parts.update(part.getBytes(StandardCharsets.UTF_8));
    }
    assertThat(parts.digest()).isEqualTo(Sha256.of("abc"));
  }
}
