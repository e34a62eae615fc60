package org.rhumbatron.lifecycle;

/** The Project, Change or Task named is not there; nothing was written. */
public final class UnknownItemException extends LifecycleException {
  public UnknownItemException(String kind, String id) {
    super("unknown " + kind + " " + id, true);
  }
}
