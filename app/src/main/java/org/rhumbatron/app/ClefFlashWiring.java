package org.rhumbatron.app;

import java.time.Clock;
import org.rhumbatron.lifecycle.ModelRouted;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.router.causal.PrefixOverlapJudge;

/** Core's Clef-flash: the judge of prefix-only resource overlaps. */
final class ClefFlashWiring {
  private ClefFlashWiring() {}

  static PrefixOverlapJudge judge(Database database, Clock clock, Settings settings) {
    return (e, m) ->
        new ModelRouted(
            e.eventId(),
            e.eventType().wireName(),
            e.projectId(),
            m.changeId(),
            m.taskId(),
            m.agentId(),
            m.eventKey(),
            m.agentKey(),
            "wake",
            null,
            "no_api_key",
            0);
  }
}
