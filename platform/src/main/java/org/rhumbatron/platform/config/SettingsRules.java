package org.rhumbatron.platform.config;

import static org.rhumbatron.platform.config.Settings.ACK_EXTEND_EVERY;
import static org.rhumbatron.platform.config.Settings.AGENT_RUNTIME;
import static org.rhumbatron.platform.config.Settings.AGENT_WEBHOOK_URL;
import static org.rhumbatron.platform.config.Settings.CLUSTER_HEARTBEAT;
import static org.rhumbatron.platform.config.Settings.CLUSTER_LEASE;
import static org.rhumbatron.platform.config.Settings.CLUSTER_POLL;
import static org.rhumbatron.platform.config.Settings.COMMAND_STREAM_MAX_AGE;
import static org.rhumbatron.platform.config.Settings.DEAD_LETTERS_KEEP_CLOSED;
import static org.rhumbatron.platform.config.Settings.DUPLICATE_WINDOW;
import static org.rhumbatron.platform.config.Settings.EVENT_STREAM_MAX_AGE;
import static org.rhumbatron.platform.config.Settings.HTTP_TLS_CERT;
import static org.rhumbatron.platform.config.Settings.HTTP_TLS_KEY;
import static org.rhumbatron.platform.config.Settings.MAX_HOLD;
import static org.rhumbatron.platform.config.Settings.OUTBOX_BACKOFF_INITIAL;
import static org.rhumbatron.platform.config.Settings.OUTBOX_BACKOFF_MAX;
import static org.rhumbatron.platform.config.Settings.OUTBOX_KEEP_PUBLISHED;
import static org.rhumbatron.platform.config.Settings.PROCESSED_EVENTS_KEEP;
import static org.rhumbatron.platform.config.Settings.QUEUE_ACK_WAIT;
import static org.rhumbatron.platform.config.Settings.SETTLE_QUIET_MAX;
import static org.rhumbatron.platform.config.Settings.SETTLE_QUIET_MIN;
import static org.rhumbatron.platform.config.Settings.WORKFLOWS_KEEP_ENDED;

import java.time.Duration;

/** The rules between settings that each value alone cannot check; a broken one names its key. */
final class SettingsRules {
  private SettingsRules() {}

  /** Refuses {@code s} when two of its values conflict, in a fixed order of checks. */
  static void check(Settings s) {
    if (s.get(CLUSTER_LEASE).compareTo(s.get(CLUSTER_HEARTBEAT).multipliedBy(2)) < 0) {
      // One late heartbeat must not cost a node its duties.
      throw new SettingsException(
          CLUSTER_LEASE.key(), "must be at least twice " + CLUSTER_HEARTBEAT.key());
    }
    notAbove(s, CLUSTER_POLL, CLUSTER_HEARTBEAT);
    notBelow(s, OUTBOX_BACKOFF_MAX, OUTBOX_BACKOFF_INITIAL);
    above(s, SETTLE_QUIET_MAX, SETTLE_QUIET_MIN);
    retention(s);
    above(s, MAX_HOLD, ACK_EXTEND_EVERY);
    if (s.get(AGENT_RUNTIME) == AgentRuntimeKind.WEBHOOK && s.get(AGENT_WEBHOOK_URL).isEmpty()) {
      throw new SettingsException(
          AGENT_WEBHOOK_URL.key(), "must be set when " + AGENT_RUNTIME.key() + " is webhook");
    }
    above(s, QUEUE_ACK_WAIT, ACK_EXTEND_EVERY);
    if (s.get(HTTP_TLS_CERT).isEmpty() != s.get(HTTP_TLS_KEY).isEmpty()) {
      Setting<String> missing = s.get(HTTP_TLS_CERT).isEmpty() ? HTTP_TLS_CERT : HTTP_TLS_KEY;
      throw new SettingsException(
          missing.key(), "must be set too: TLS needs both http.tls.cert and http.tls.key");
    }
    credentials(s);
  }

  /** One way of proving core to NATS, and one source of the database password. */
  private static void credentials(Settings s) {
    boolean user = !s.get(Settings.NATS_USER).isEmpty();
    boolean password = !s.get(Settings.NATS_PASSWORD).isEmpty();
    if (user != password) {
      throw new SettingsException(
          user ? Settings.NATS_PASSWORD.key() : Settings.NATS_USER.key(),
          "must be set together with "
              + (user ? Settings.NATS_USER : Settings.NATS_PASSWORD).key());
    }
    int kinds =
        (user ? 1 : 0)
            + (s.get(Settings.NATS_TOKEN).isEmpty() ? 0 : 1)
            + (s.get(Settings.NATS_CREDS).isEmpty() ? 0 : 1);
    if (kinds > 1) {
      throw new SettingsException(
          Settings.NATS_CREDS.key(),
          "give one of nats.user with nats.password, nats.token or nats.creds, not several");
    }
    if (!s.get(Settings.DATABASE_PASSWORD).isEmpty()
        && !s.get(Settings.DATABASE_PASSWORD_FILE).isEmpty()) {
      throw new SettingsException(
          Settings.DATABASE_PASSWORD_FILE.key(),
          "give database.password or database.password-file, not both");
    }
  }

  /** What is kept against what the streams may still deliver again. */
  private static void retention(Settings s) {
    // A replayed event (a consumer reset or recreated) must still find its claim, or the
    // projector would apply it, and write its feed row, a second time.
    notBelow(s, PROCESSED_EVENTS_KEEP, EVENT_STREAM_MAX_AGE);
    // JetStream refuses a stream whose duplicate window is longer than its max age.
    notAbove(s, DUPLICATE_WINDOW, EVENT_STREAM_MAX_AGE);
    notAbove(s, DUPLICATE_WINDOW, COMMAND_STREAM_MAX_AGE);
    // A command COMMANDS still holds can reach the dead-letter queue again; its row keeps that
    // a repeat (command_id UNIQUE) instead of a new open dead letter.
    notBelow(s, DEAD_LETTERS_KEEP_CLOSED, COMMAND_STREAM_MAX_AGE);
    // A verification.start or release.start COMMANDS still holds must find its instance, or the
    // engine would run the Workflow a second time.
    notBelow(s, WORKFLOWS_KEEP_ENDED, COMMAND_STREAM_MAX_AGE);
    below(s, OUTBOX_KEEP_PUBLISHED, EVENT_STREAM_MAX_AGE);
  }

  private static void notBelow(Settings s, Setting<Duration> a, Setting<Duration> b) {
    refuseUnless(s.get(a).compareTo(s.get(b)) >= 0, a, "must not be below ", b);
  }

  private static void notAbove(Settings s, Setting<Duration> a, Setting<Duration> b) {
    refuseUnless(s.get(a).compareTo(s.get(b)) <= 0, a, "must not be above ", b);
  }

  private static void above(Settings s, Setting<Duration> a, Setting<Duration> b) {
    refuseUnless(s.get(a).compareTo(s.get(b)) > 0, a, "must be above ", b);
  }

  private static void below(Settings s, Setting<Duration> a, Setting<Duration> b) {
    refuseUnless(s.get(a).compareTo(s.get(b)) < 0, a, "must be below ", b);
  }

  private static void refuseUnless(boolean holds, Setting<?> a, String rule, Setting<?> b) {
    if (!holds) {
      throw new SettingsException(a.key(), rule + b.key());
    }
  }
}
