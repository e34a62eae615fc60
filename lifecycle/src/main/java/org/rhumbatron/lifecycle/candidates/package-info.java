/**
 * Candidates and releases: composition on the current canonical generation, the verifier's verdict,
 * approval through the root's decidePromotion, decline, staleness after the canonical generation
 * moved, and the release Workflow's outcome. {@link org.rhumbatron.lifecycle.candidates.Approvals}
 * is the entry point.
 */
package org.rhumbatron.lifecycle.candidates;
