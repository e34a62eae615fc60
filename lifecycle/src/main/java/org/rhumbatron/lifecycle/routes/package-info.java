/**
 * Clef-flash model routing decisions, one per Event and Task, kept with their {@code model.routed}
 * Event on the shard of the Change so a repeat returns the first decision.
 */
package org.rhumbatron.lifecycle.routes;
