package org.rhumbatron.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.function.Function;
import java.util.logging.Level;
import java.util.stream.Stream;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.logging.LogEntry;
import org.openqa.selenium.logging.LogType;
import org.openqa.selenium.logging.LoggingPreferences;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * A real headless Chromium (Debian's chromium and chromedriver) on a fresh profile, and the waits
 * the dashboard tests share: the page polls every 2 s, so each assertion waits for its DOM state.
 */
final class DashboardBrowser implements AutoCloseable {
  static final Path CHROMIUM = Path.of("/usr/bin/chromium");
  static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");
  static final Duration WAIT = Duration.ofSeconds(60);

  private final Path profile;
  private final ChromeDriverService service;
  final ChromeDriver driver;

  private DashboardBrowser(Path profile, ChromeDriverService service, ChromeDriver driver) {
    this.profile = profile;
    this.service = service;
    this.driver = driver;
  }

  /** Starts the browser; chromedriver logs to {@code logDir}. */
  static DashboardBrowser start(Path logDir) throws IOException {
    assertThat(CHROMIUM).as("Debian's chromium (bin/setup test installs it)").isExecutable();
    assertThat(CHROMEDRIVER)
        .as("Debian's chromedriver (bin/setup test installs it)")
        .isExecutable();
    // A fresh profile each run: no cache, no token or project left in localStorage.
    Path profile = Files.createTempDirectory("rhumbatron-chromium-");
    ChromeOptions options = new ChromeOptions();
    options.setBinary(CHROMIUM.toFile());
    options.addArguments(
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=1400,1000",
        "--user-data-dir=" + profile);
    LoggingPreferences logs = new LoggingPreferences();
    logs.enable(LogType.BROWSER, Level.ALL);
    options.setCapability("goog:loggingPrefs", logs);
    ChromeDriverService service =
        new ChromeDriverService.Builder()
            .usingDriverExecutable(CHROMEDRIVER.toFile())
            .usingAnyFreePort()
            .withLogFile(logDir.resolve("chromedriver.log").toFile())
            .build();
    return new DashboardBrowser(profile, service, new ChromeDriver(service, options));
  }

  /** Uncaught script errors since the last call: one stops a poll or a click handler. */
  List<String> scriptErrors() {
    List<String> errors = new ArrayList<>();
    for (LogEntry e : driver.manage().logs().get(LogType.BROWSER)) {
      if (e.getMessage().contains("Uncaught")) {
        errors.add(e.getMessage());
      }
    }
    return errors;
  }

  /** Opens the dashboard of the core on {@code port} and waits for its first refresh. */
  void open(int port, String query) {
    driver.get("http://127.0.0.1:" + port + "/?" + query);
    waitUntil("the first refresh", d -> body().getAttribute("data-refreshes") != null);
  }

  WebElement body() {
    return driver.findElement(By.tagName("body"));
  }

  WebElement waitFor(By by) {
    return new WebDriverWait(driver, WAIT)
        .withMessage(() -> "no " + by + "\n" + pageText())
        .until(d -> d.findElements(by).stream().findFirst().orElse(null));
  }

  void waitUntil(String what, Function<WebDriver, Boolean> until) {
    new WebDriverWait(driver, WAIT)
        .ignoring(StaleElementReferenceException.class)
        .withMessage(() -> what + "\n" + pageText())
        .until(until);
  }

  /** Clicks an element that a poll may replace between finding and clicking it. */
  void clickWhenStable(By by) {
    new WebDriverWait(driver, WAIT)
        .withMessage(() -> "cannot click " + by + "\n" + pageText())
        .until(
            d -> {
              try {
                List<WebElement> found = d.findElements(by);
                if (found.isEmpty() || !found.get(0).isEnabled()) {
                  return false;
                }
                found.get(0).click();
                return true;
              } catch (StaleElementReferenceException e) {
                return false;
              }
            });
  }

  /** The attribute of the first element {@code by} finds, or null when there is none. */
  String attribute(By by, String name) {
    List<WebElement> found = driver.findElements(by);
    return found.isEmpty() ? null : found.get(0).getAttribute(name);
  }

  /** A PNG of the element (e.g. a section), for docs/. */
  void screenshot(By by, Path file) throws IOException {
    WebElement e = driver.findElement(by);
    ((JavascriptExecutor) driver).executeScript("arguments[0].scrollIntoView()", e);
    Files.createDirectories(file.toAbsolutePath().getParent());
    Files.write(file, e.getScreenshotAs(OutputType.BYTES));
  }

  String pageText() {
    try {
      Object text =
          ((JavascriptExecutor) driver)
              .executeScript(
                  "return 'body[data-nats]=' + document.body.getAttribute('data-nats')"
                      + " + ' refreshes=' + document.body.getAttribute('data-refreshes')"
                      + " + '\\n' + document.body.innerText");
      return String.valueOf(text);
    } catch (RuntimeException e) {
      return "(page unreadable: " + e + ")";
    }
  }

  @Override
  public void close() throws IOException {
    try {
      driver.quit();
      service.stop();
    } finally {
      deleteRecursively(profile);
    }
  }

  /** Closes the browser, then the core it looked at (either may be null). */
  static void closeBoth(DashboardBrowser browser, CoreService core) throws IOException {
    try {
      if (browser != null) {
        browser.close();
      }
    } finally {
      if (core != null) {
        core.close();
      }
    }
  }

  static void deleteRecursively(Path dir) throws IOException {
    if (dir == null || !Files.exists(dir)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(dir)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }
}
