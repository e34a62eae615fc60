package org.rhumbatron.platform.jetstream;

/**
 * One stream setting that differs from the topology: the field by its server (JSON) name, the value
 * found on the server and the value core wants.
 */
public record FieldDrift(String field, String actual, String wanted) {
  @Override
  public String toString() {
    return field + " " + actual + " -> " + wanted;
  }
}
