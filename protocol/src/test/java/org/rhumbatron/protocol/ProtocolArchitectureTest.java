package org.rhumbatron.protocol;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaMethodCall;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.library.GeneralCodingRules;
import java.time.Instant;
import java.util.Set;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The protocol does no I/O and reads no clock. It may read its own classpath resources (hence
 * InputStream, IOException and UncheckedIOException), nothing else.
 *
 * <p>Plain JUnit tests rather than {@code @ArchTest} fields, which Surefire does not count.
 */
class ProtocolArchitectureTest {

  private static final Set<String> ALLOWED_JAVA_IO =
      Set.of(
          "java.io.InputStream",
          "java.io.IOException",
          "java.io.UncheckedIOException",
          "java.io.Serializable");

  static final ArchRule NO_NETWORK_STORAGE_MESSAGING_OR_LOGGING =
      noClasses()
          .should()
          .dependOnClassesThat()
          .resideInAnyPackage(
              "java.net..",
              "java.nio.file..",
              "java.nio.channels..",
              "java.sql..",
              "javax.sql..",
              "io.nats..",
              "org.slf4j..",
              "ch.qos.logback..")
          .because("the protocol owns names and shapes; adapters do the I/O");

  static final ArchRule ONLY_RESOURCE_READING_FROM_JAVA_IO =
      noClasses()
          .should()
          .dependOnClassesThat(
              DescribedPredicate.describe(
                  "are java.io classes other than " + ALLOWED_JAVA_IO,
                  (JavaClass c) ->
                      c.getPackageName().equals("java.io")
                          && !ALLOWED_JAVA_IO.contains(c.getName())))
          .because("files and consoles are I/O");

  static final ArchRule NO_CLOCKS =
      noClasses()
          .should()
          .dependOnClassesThat()
          .areAssignableTo(java.time.Clock.class)
          .orShould()
          .callMethodWhere(
              DescribedPredicate.describe(
                  "reads the current time",
                  (JavaMethodCall call) -> {
                    String owner = call.getTargetOwner().getName();
                    String name = call.getName();
                    return (owner.startsWith("java.time.") && name.equals("now"))
                        || (owner.equals("java.lang.System")
                            && (name.equals("currentTimeMillis") || name.equals("nanoTime")));
                  }))
          .because("timestamps come in as values, so tests and replays control them");

  private static JavaClasses protocol;

  @BeforeAll
  static void importProtocol() {
    protocol =
        new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("org.rhumbatron.protocol");
  }

  @Test
  void noNetworkStorageMessagingOrLogging() {
    NO_NETWORK_STORAGE_MESSAGING_OR_LOGGING.check(protocol);
  }

  @Test
  void onlyResourceReadingFromJavaIo() {
    ONLY_RESOURCE_READING_FROM_JAVA_IO.check(protocol);
  }

  @Test
  void noClocks() {
    NO_CLOCKS.check(protocol);
  }

  @Test
  void noStandardStreams() {
    GeneralCodingRules.NO_CLASSES_SHOULD_ACCESS_STANDARD_STREAMS.check(protocol);
  }

  @Test
  void theRulesCatchViolations() {
    // Guards the guards: each rule fails on a class that breaks it.
    JavaClasses offenders = new ClassFileImporter().importClasses(Offender.class);

    assertThatThrownBy(() -> NO_NETWORK_STORAGE_MESSAGING_OR_LOGGING.check(offenders))
        .isInstanceOf(AssertionError.class);
    assertThatThrownBy(() -> ONLY_RESOURCE_READING_FROM_JAVA_IO.check(offenders))
        .isInstanceOf(AssertionError.class);
    assertThatThrownBy(() -> NO_CLOCKS.check(offenders)).isInstanceOf(AssertionError.class);
  }

  @SuppressWarnings("unused")
  private static final class Offender {
    Object io() throws Exception {
      return new java.io.File("x").toURI().toURL();
    }

    Instant now() {
      return Instant.now();
    }
  }
}
