package org.rhumbatron.app;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The folders show the architecture: each layer depends only on the layers below it. */
class LayeringTest {
  private static JavaClasses classes;

  @BeforeAll
  static void importClasses() {
    classes =
        new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            // A module's test jar (the lifecycle fixture) is test code too; in a reactor build
            // it is on the class path as a jar, not as a test-classes folder.
            .withImportOption(location -> !location.contains("-tests.jar"))
            .importPackages("org.rhumbatron");
  }

  @Test
  void protocolDependsOnNoOtherLayer() {
    noClasses()
        .that()
        .resideInAPackage("org.rhumbatron.protocol..")
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage(
            "org.rhumbatron.platform..",
            "org.rhumbatron.coordinator..",
            "org.rhumbatron.lifecycle..",
            "org.rhumbatron.router..",
            "org.rhumbatron.integration..",
            "org.rhumbatron.agents..",
            "org.rhumbatron.indexer..",
            "org.rhumbatron.app..",
            "io.nats..",
            "java.sql..",
            "java.net..",
            "java.nio.file..")
        .check(classes);
  }

  @Test
  void platformDoesNotReachUp() {
    noClasses()
        .that()
        .resideInAPackage("org.rhumbatron.platform..")
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage(
            "org.rhumbatron.coordinator..",
            "org.rhumbatron.lifecycle..",
            "org.rhumbatron.router..",
            "org.rhumbatron.integration..",
            "org.rhumbatron.agents..",
            "org.rhumbatron.indexer..",
            "org.rhumbatron.app..")
        .check(classes);
  }

  @Test
  void routerDoesNotReachUp() {
    noClasses()
        .that()
        .resideInAPackage("org.rhumbatron.router..")
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage(
            "org.rhumbatron.integration..",
            "org.rhumbatron.agents..",
            "org.rhumbatron.indexer..",
            "org.rhumbatron.app..")
        .check(classes);
  }

  @Test
  void lifecycleSitsBetweenCoordinatorAndTheConsumers() {
    noClasses()
        .that()
        .resideInAPackage("org.rhumbatron.lifecycle..")
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage(
            "org.rhumbatron.router..",
            "org.rhumbatron.integration..",
            "org.rhumbatron.agents..",
            "org.rhumbatron.indexer..",
            "org.rhumbatron.app..",
            "io.nats..")
        .check(classes);
  }

  @Test
  void theQueueConsumersDoNotKnowEachOtherOrTheApp() {
    noClasses()
        .that()
        .resideInAPackage("org.rhumbatron.integration..")
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage(
            "org.rhumbatron.router..",
            "org.rhumbatron.agents..",
            "org.rhumbatron.indexer..",
            "org.rhumbatron.app..")
        .check(classes);
    noClasses()
        .that()
        .resideInAPackage("org.rhumbatron.agents..")
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage(
            "org.rhumbatron.integration..",
            "org.rhumbatron.router..",
            "org.rhumbatron.indexer..",
            "org.rhumbatron.app..")
        .check(classes);
    noClasses()
        .that()
        .resideInAPackage("org.rhumbatron.indexer..")
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage(
            "org.rhumbatron.router..",
            "org.rhumbatron.integration..",
            "org.rhumbatron.agents..",
            "org.rhumbatron.app..")
        .check(classes);
  }

  @Test
  void coordinatorDoesNotReachUp() {
    noClasses()
        .that()
        .resideInAPackage("org.rhumbatron.coordinator..")
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage(
            "org.rhumbatron.lifecycle..",
            "org.rhumbatron.router..",
            "org.rhumbatron.integration..",
            "org.rhumbatron.agents..",
            "org.rhumbatron.indexer..",
            "org.rhumbatron.app..")
        .check(classes);
  }

  @Test
  void productionCodeDoesNotUseTheTestKit() {
    noClasses()
        .that()
        .resideOutsideOfPackage("org.rhumbatron.testkit..")
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage("org.rhumbatron.testkit..", "org.junit..")
        .check(classes);
  }

  @Test
  void clockReadsGoThroughAnInjectedClock() {
    noClasses()
        .that()
        .resideOutsideOfPackage("org.rhumbatron.testkit..")
        .should()
        .callMethod(System.class, "currentTimeMillis")
        .orShould()
        .callMethod(java.time.Instant.class, "now")
        .orShould()
        .callMethod(java.time.LocalDateTime.class, "now")
        .orShould()
        .callMethod(java.time.ZonedDateTime.class, "now")
        .because("every clock read goes through an injectable java.time.Clock")
        .check(classes);
  }
}
