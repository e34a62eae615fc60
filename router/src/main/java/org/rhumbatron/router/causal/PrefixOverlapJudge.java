package org.rhumbatron.router.causal;

import org.rhumbatron.lifecycle.claims.ActiveScopes;
import org.rhumbatron.lifecycle.routes.ModelRouted;
import org.rhumbatron.protocol.Event;

/**
 * Decides a prefix-only resource overlap: whether the active Agent of {@code match} wakes for
 * {@code event}. Core's judge is Clef-flash; it is called outside any write transaction.
 */
@FunctionalInterface
public interface PrefixOverlapJudge {

  ModelRouted decide(Event event, ActiveScopes.Match match);
}
