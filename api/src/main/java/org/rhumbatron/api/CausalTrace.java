package org.rhumbatron.api;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The causal graph of one project's Events and Commands, built from their envelopes: an Event's
 * parent is its {@code causedBy}, or its {@code correlationId} when that names another known node;
 * a Command's parent is the Event its payload or its stable id names ({@code cmd_<event>_...}).
 * Commands leave no row once they ran, so a Command is known from a dead letter or because an Event
 * names it as {@code causedBy}; such a Command's type is read from its stable id.
 */
final class CausalTrace {
  /** Nodes a tree shows at most; a larger tree is cut and says so. */
  static final int MAX_NODES = 2_000;

  static final String EVENT = "event";
  static final String COMMAND = "command";

  private static final Pattern EVENT_IN_COMMAND_ID = Pattern.compile("^cmd_(evt_[0-9a-f]{32})_");
  private static final Pattern READY_WAKE = Pattern.compile("^cmd_(.+)_ready(?:_a(\\d+))?$");

  /** Stable command-id suffixes (StableIds, CausalRules) and the command type each names. */
  private static final Map<String, String> SUFFIX_TYPES =
      Map.of(
          "dispatch", "change.dispatch",
          "settle", "change.settle",
          "candidate", "candidate.create",
          "index", "index.build",
          "recompose", "candidates.recompose",
          "verify", "verification.start",
          "release", "release.start",
          "rebase", "candidates.recompose");

  /** One Event or Command; {@code known} is false for an id only referenced by another node. */
  record Node(
      String id,
      String kind,
      String type,
      String causedBy,
      String correlationId,
      String changeId,
      String taskId,
      String at,
      boolean known,
      Map<String, Object> extra) {}

  private final Map<String, Node> nodes = new LinkedHashMap<>();
  private final Map<String, List<String>> children = new LinkedHashMap<>();

  /** Adds an Event envelope (outbox payload or feed row). */
  void addEvent(JsonNode e) {
    String id = e.path("eventId").asText(null);
    if (id == null || nodes.containsKey(id) && nodes.get(id).known()) {
      return;
    }
    nodes.put(
        id,
        new Node(
            id,
            EVENT,
            e.path("eventType").asText(null),
            e.path("causedBy").asText(null),
            e.path("correlationId").asText(null),
            e.path("changeId").asText(null),
            e.path("taskId").asText(null),
            e.path("timestamp").asText(null),
            true,
            Map.of()));
  }

  /** Adds a dead-lettered Command envelope with its dead letter's id and status. */
  void addDeadLetter(JsonNode c, long deadLetterId, String status) {
    String id = c.path("commandId").asText(null);
    if (id == null) {
      return;
    }
    String causedBy = c.path("payload").path("eventId").asText(null);
    nodes.put(
        id,
        new Node(
            id,
            COMMAND,
            c.path("commandType").asText(null),
            causedBy == null ? eventOf(id) : causedBy,
            null,
            c.path("changeId").asText(null),
            c.path("taskId").asText(null),
            c.path("createdAt").asText(null),
            true,
            Map.of("deadLetter", Map.of("id", deadLetterId, "status", status))));
  }

  /** Links every node to its parent, and adds the Commands that Events name only as causedBy. */
  void link() {
    for (Node n : List.copyOf(nodes.values())) {
      if (n.causedBy() != null && !nodes.containsKey(n.causedBy())) {
        nodes.put(n.causedBy(), referenced(n.causedBy()));
      }
    }
    for (Node n : nodes.values()) {
      String parent = parentOf(n);
      if (parent != null) {
        children.computeIfAbsent(parent, k -> new ArrayList<>()).add(n.id());
      }
    }
  }

  boolean contains(String id) {
    return nodes.containsKey(id);
  }

  /** The first ancestor of {@code id} that has no known parent (a cycle stops the walk). */
  String rootOf(String id) {
    Set<String> seen = new HashSet<>();
    String at = id;
    while (seen.add(at)) {
      String parent = parentOf(nodes.get(at));
      if (parent == null || !nodes.containsKey(parent)) {
        return at;
      }
      at = parent;
    }
    return at;
  }

  /** The tree under {@code rootId} as JSON maps, at most {@link #MAX_NODES} nodes. */
  Map<String, Object> tree(String rootId, String asked) {
    int[] budget = {MAX_NODES};
    Set<String> seen = new HashSet<>();
    Map<String, Object> root = subtree(rootId, asked, seen, budget);
    return Json.object("root", root, "nodes", seen.size(), "truncated", budget[0] < 0);
  }

  private Map<String, Object> subtree(String id, String asked, Set<String> seen, int[] budget) {
    Node n = nodes.get(id);
    seen.add(id);
    budget[0]--;
    Map<String, Object> out =
        Json.object(
            "id", n.id(),
            "kind", n.kind(),
            "type", n.type(),
            "causedBy", n.causedBy(),
            "correlationId", n.correlationId(),
            "changeId", n.changeId(),
            "taskId", n.taskId(),
            "at", n.at(),
            "known", n.known(),
            "asked", n.id().equals(asked));
    out.putAll(n.extra());
    List<Object> kids = new ArrayList<>();
    for (String child : children.getOrDefault(id, List.of())) {
      if (budget[0] <= 0) {
        budget[0] = -1;
        break;
      }
      if (!seen.contains(child)) {
        kids.add(subtree(child, asked, seen, budget));
      }
    }
    out.put("children", kids);
    return out;
  }

  /** causedBy; else a correlationId that names another node; for a ready wake, its dispatch. */
  private String parentOf(Node n) {
    if (n.causedBy() != null) {
      return n.causedBy();
    }
    if (n.correlationId() != null
        && !n.correlationId().equals(n.id())
        && nodes.containsKey(n.correlationId())) {
      return n.correlationId();
    }
    return null;
  }

  /**
   * A node known only because another one names it. A ready wake ({@code cmd_<task>_ready}) was
   * sent by the dispatch that assigned its Task: the causedBy of that Task's task.assigned.
   */
  private Node referenced(String id) {
    if (!id.startsWith("cmd_")) {
      return new Node(id, EVENT, null, null, null, null, null, null, false, Map.of());
    }
    String causedBy = eventOf(id);
    Matcher ready = READY_WAKE.matcher(id);
    if (causedBy == null && ready.matches()) {
      causedBy = assignedBy(ready.group(1));
    }
    return new Node(id, COMMAND, typeOf(id), causedBy, null, null, null, null, false, Map.of());
  }

  private String assignedBy(String taskId) {
    String by = null;
    for (Node n : nodes.values()) {
      if (taskId.equals(n.taskId()) && "task.assigned".equals(n.type()) && n.known()) {
        by = n.causedBy(); // the latest assignment: the nodes keep outbox order
      }
    }
    return by;
  }

  static String eventOf(String commandId) {
    Matcher m = EVENT_IN_COMMAND_ID.matcher(commandId);
    return m.find() ? m.group(1) : null;
  }

  /** The command type a stable id names, or null when the id has no such form. */
  static String typeOf(String commandId) {
    if (READY_WAKE.matcher(commandId).matches()) {
      return "agent.wake";
    }
    if (commandId.startsWith("cmd_project.provision_")) {
      return "project.provision";
    }
    int last = commandId.lastIndexOf('_');
    String type = SUFFIX_TYPES.get(commandId.substring(last + 1));
    if (type == null && eventOf(commandId) != null) {
      return "agent.wake"; // cmd_<event>_<task>: the causal router's wake
    }
    return type;
  }
}
