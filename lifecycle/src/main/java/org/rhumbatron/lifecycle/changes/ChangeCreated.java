package org.rhumbatron.lifecycle.changes;

/** What createChange did: the Change, and whether this call created it (false: a repeat). */
public record ChangeCreated(ChangeInfo change, boolean created) {}
