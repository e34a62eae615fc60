package org.rhumbatron.checker;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * What a check counted. Totals ({@link #total}) describe the run; violations ({@link #violation})
 * are what must be 0, each with the ids it found, so a failed run names what to look at. A run that
 * broke down itself ({@link #internalError}) has no verdict on the history: the report says so,
 * with the seed that repeats it.
 */
public final class CheckReport {
  /** How many ids of one violation the report prints; the count is always whole. */
  static final int IDS_SHOWN = 20;

  private static final ObjectMapper JSON = new ObjectMapper();

  private final Map<String, Long> totals = new LinkedHashMap<>();
  private final Map<String, SortedSet<String>> violations = new LinkedHashMap<>();
  private final Map<String, Long> faults = new LinkedHashMap<>();
  private final List<String> notes = new ArrayList<>();
  private final List<String> dropped = new ArrayList<>();
  private Long seed;
  private String internalError;

  void seed(long value) {
    seed = value;
  }

  /** A fault kind asked for that did not fit in {@code --duration}. */
  void dropped(String kind) {
    if (!dropped.contains(kind)) {
      dropped.add(kind);
    }
  }

  /** The check itself failed (not the system it checked): no verdict on the history. */
  void internalError(Throwable e) {
    internalError = e.getClass().getName() + ": " + e.getMessage();
  }

  /** The run's own figures (seed, faults injected and dropped) of {@code run}, into this one. */
  void takeRunFrom(CheckReport run) {
    if (run.seed != null) {
      seed = run.seed;
    }
    run.faults.forEach(this::fault);
    run.dropped.forEach(this::dropped);
  }

  public Long seed() {
    return seed;
  }

  public List<String> dropped() {
    return List.copyOf(dropped);
  }

  /** The internal error that ended the run, or null. */
  public String internalError() {
    return internalError;
  }

  void total(String name, long value) {
    totals.put(name, value);
  }

  /** Declares a violation with no ids yet, so the report lists it with 0. */
  void expect(String name) {
    violations.computeIfAbsent(name, k -> new TreeSet<>());
  }

  void violation(String name, String id) {
    violations.computeIfAbsent(name, k -> new TreeSet<>()).add(id);
  }

  void fault(String name, long count) {
    faults.merge(name, count, Long::sum);
  }

  void note(String note) {
    notes.add(note);
  }

  public long count(String violation) {
    SortedSet<String> ids = violations.get(violation);
    return ids == null ? 0 : ids.size();
  }

  public SortedSet<String> ids(String violation) {
    return violations.getOrDefault(violation, new TreeSet<>());
  }

  public Map<String, Long> totals() {
    return Map.copyOf(totals);
  }

  public Map<String, Long> faults() {
    return Map.copyOf(faults);
  }

  /** The run ended normally and every violation's count is 0. */
  public boolean passed() {
    return internalError == null && violations.values().stream().allMatch(SortedSet::isEmpty);
  }

  public String toJson() {
    ObjectNode out = JSON.createObjectNode();
    out.put("passed", passed());
    if (seed != null) {
      out.put("seed", seed);
    }
    if (internalError != null) {
      out.put("internal_error", internalError);
    }
    ObjectNode f = out.putObject("faults");
    faults.forEach(f::put);
    ArrayNode d = out.putArray("dropped");
    dropped.forEach(d::add);
    ObjectNode t = out.putObject("totals");
    totals.forEach(t::put);
    ObjectNode v = out.putObject("violations");
    violations.forEach(
        (name, ids) -> {
          ObjectNode one = v.putObject(name);
          one.put("count", ids.size());
          ArrayNode shown = one.putArray("ids");
          ids.stream().limit(IDS_SHOWN).forEach(shown::add);
        });
    ArrayNode n = out.putArray("notes");
    notes.forEach(n::add);
    try {
      return JSON.writerWithDefaultPrettyPrinter().writeValueAsString(out);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  public String toTable() {
    StringBuilder b = new StringBuilder();
    if (internalError != null) {
      b.append("\nrhumbatron check: INTERNAL ERROR, no verdict on the history\n");
      b.append("  ").append(internalError).append('\n');
    } else {
      b.append(passed() ? "\nrhumbatron check: passed\n" : "\nrhumbatron check: FAILED\n");
    }
    if (seed != null) {
      b.append("  seed ").append(seed).append('\n');
    }
    b.append("  faults injected\n");
    faults.forEach((k, c) -> b.append(String.format("    %-34s %d%n", k, c)));
    if (!dropped.isEmpty()) {
      b.append("  faults dropped (they did not fit in --duration)\n");
      dropped.forEach(k -> b.append("    ").append(k).append('\n'));
    }
    b.append("  totals\n");
    totals.forEach((k, c) -> b.append(String.format("    %-34s %d%n", k, c)));
    b.append("  counts that must be 0\n");
    violations.forEach(
        (k, ids) -> {
          b.append(String.format("    %-34s %d", k, ids.size()));
          if (!ids.isEmpty()) {
            b.append("  ").append(String.join(", ", ids.stream().limit(IDS_SHOWN).toList()));
            if (ids.size() > IDS_SHOWN) {
              b.append(", and ").append(ids.size() - IDS_SHOWN).append(" more");
            }
          }
          b.append('\n');
        });
    notes.forEach(n -> b.append("  note: ").append(n).append('\n'));
    return b.toString();
  }
}
