package org.rhumbatron.app;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The folders show the architecture: each layer depends only on the layers below it. From the
 * bottom: protocol; faults; platform; coordinator; lifecycle; router, integration, agents, indexer;
 * api; server; workload; bench and checker; and app, the launcher, on top. cli stands apart: it
 * talks to core over HTTP only.
 */
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
    reachesNone(
        "org.rhumbatron.protocol..",
        aboveTheConsumers(
            "org.rhumbatron.platform..",
            "org.rhumbatron.coordinator..",
            "org.rhumbatron.lifecycle..",
            "org.rhumbatron.router..",
            "org.rhumbatron.integration..",
            "org.rhumbatron.agents..",
            "org.rhumbatron.indexer..",
            "io.nats..",
            "java.sql..",
            "java.net..",
            "java.nio.file.."));
  }

  @Test
  void platformDoesNotReachUp() {
    reachesNone(
        "org.rhumbatron.platform..",
        aboveTheConsumers(
            "org.rhumbatron.coordinator..",
            "org.rhumbatron.lifecycle..",
            "org.rhumbatron.router..",
            "org.rhumbatron.integration..",
            "org.rhumbatron.agents..",
            "org.rhumbatron.indexer.."));
  }

  @Test
  void routerDoesNotReachUp() {
    reachesNone(
        "org.rhumbatron.router..",
        aboveTheConsumers(
            "org.rhumbatron.integration..", "org.rhumbatron.agents..", "org.rhumbatron.indexer.."));
  }

  @Test
  void lifecycleSitsBetweenCoordinatorAndTheConsumers() {
    reachesNone(
        "org.rhumbatron.lifecycle..",
        aboveTheConsumers(
            "org.rhumbatron.router..",
            "org.rhumbatron.integration..",
            "org.rhumbatron.agents..",
            "org.rhumbatron.indexer..",
            "io.nats.."));
  }

  @Test
  void theQueueConsumersDoNotKnowEachOtherOrTheApp() {
    reachesNone(
        "org.rhumbatron.integration..",
        aboveTheConsumers(
            "org.rhumbatron.router..", "org.rhumbatron.agents..", "org.rhumbatron.indexer.."));
    reachesNone(
        "org.rhumbatron.agents..",
        aboveTheConsumers(
            "org.rhumbatron.integration..", "org.rhumbatron.router..", "org.rhumbatron.indexer.."));
    reachesNone(
        "org.rhumbatron.indexer..",
        aboveTheConsumers(
            "org.rhumbatron.router..", "org.rhumbatron.integration..", "org.rhumbatron.agents.."));
  }

  @Test
  void coordinatorDoesNotReachUp() {
    reachesNone(
        "org.rhumbatron.coordinator..",
        aboveTheConsumers(
            "org.rhumbatron.lifecycle..",
            "org.rhumbatron.router..",
            "org.rhumbatron.integration..",
            "org.rhumbatron.agents..",
            "org.rhumbatron.indexer.."));
  }

  @Test
  void eachModuleHoldsThePackagesOfItsName() {
    // A class of module M (its target/classes or its rhumbatron-M jar) is in org.rhumbatron.M.
    Set<String> modules =
        Set.of(
            "protocol",
            "testkit",
            "faults",
            "platform",
            "coordinator",
            "lifecycle",
            "router",
            "integration",
            "agents",
            "indexer",
            "cli",
            "api",
            "server",
            "workload",
            "bench",
            "checker",
            "app");
    List<String> misplaced = new ArrayList<>();
    int placed = 0;
    for (JavaClass c : classes) {
      String where = c.getSource().map(s -> s.getUri().toString()).orElse("");
      for (String module : modules) {
        if (where.contains("/" + module + "/target/classes/")
            || where.contains("/rhumbatron-" + module + "-")) {
          placed++;
          if (!c.getPackageName().equals("org.rhumbatron." + module)
              && !c.getPackageName().startsWith("org.rhumbatron." + module + ".")) {
            misplaced.add(c.getName() + " in " + module + "/");
          }
        }
      }
    }
    assertThat(placed).as("classes found in the modules").isGreaterThan(500);
    assertThat(misplaced).isEmpty();
  }

  @Test
  void theCliUsesNothingOfCore() {
    classes()
        .that()
        .resideInAPackage("org.rhumbatron.cli..")
        .should()
        .onlyDependOnClassesThat()
        .resideInAnyPackage(
            "org.rhumbatron.cli..",
            "java..",
            "javax.net.ssl..", // --cacert: the JDK's TLS, nothing of core
            "picocli..",
            "com.fasterxml.jackson..")
        .check(classes);
  }

  @Test
  void faultsDependOnNoOtherModuleAndServeOnlyTheChecker() {
    classes()
        .that()
        .resideInAPackage("org.rhumbatron.faults..")
        .should()
        .onlyDependOnClassesThat()
        .resideInAnyPackage("org.rhumbatron.faults..", "java..")
        .check(classes);
    noClasses()
        .that()
        .resideOutsideOfPackages("org.rhumbatron.faults..", "org.rhumbatron.checker..")
        .should()
        .dependOnClassesThat()
        .resideInAPackage("org.rhumbatron.faults..")
        .check(classes);
  }

  @Test
  void theApiSitsBelowTheServer() {
    reachesNone(
        "org.rhumbatron.api..",
        "org.rhumbatron.integration..",
        "org.rhumbatron.agents..",
        "org.rhumbatron.indexer..",
        "org.rhumbatron.server..",
        "org.rhumbatron.workload..",
        "org.rhumbatron.bench..",
        "org.rhumbatron.checker..",
        "org.rhumbatron.cli..",
        "org.rhumbatron.app..");
  }

  @Test
  void theServerKnowsNoneOfItsTools() {
    reachesNone(
        "org.rhumbatron.server..",
        "org.rhumbatron.workload..",
        "org.rhumbatron.bench..",
        "org.rhumbatron.checker..",
        "org.rhumbatron.cli..",
        "org.rhumbatron.app..");
  }

  @Test
  void theWorkloadSitsBelowTheBenchmarksAndTheChecker() {
    reachesNone(
        "org.rhumbatron.workload..",
        "org.rhumbatron.bench..",
        "org.rhumbatron.checker..",
        "org.rhumbatron.cli..",
        "org.rhumbatron.app..");
  }

  @Test
  void theBenchmarksAndTheCheckerDoNotKnowEachOtherOrTheLauncher() {
    reachesNone(
        "org.rhumbatron.bench..",
        "org.rhumbatron.checker..",
        "org.rhumbatron.cli..",
        "org.rhumbatron.app..");
    reachesNone(
        "org.rhumbatron.checker..",
        "org.rhumbatron.bench..",
        "org.rhumbatron.cli..",
        "org.rhumbatron.app..");
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

  /** No class of {@code layer} depends on a class of any of {@code above}. */
  private static void reachesNone(String layer, String... above) {
    noClasses()
        .that()
        .resideInAPackage(layer)
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage(above)
        .check(classes);
  }

  /** {@code lower} and the floors above the queue consumers: API, server, tools, launcher. */
  private static String[] aboveTheConsumers(String... lower) {
    List<String> all = new ArrayList<>(List.of(lower));
    all.addAll(
        List.of(
            "org.rhumbatron.api..",
            "org.rhumbatron.server..",
            "org.rhumbatron.workload..",
            "org.rhumbatron.bench..",
            "org.rhumbatron.checker..",
            "org.rhumbatron.cli..",
            "org.rhumbatron.app.."));
    return all.toArray(String[]::new);
  }
}
