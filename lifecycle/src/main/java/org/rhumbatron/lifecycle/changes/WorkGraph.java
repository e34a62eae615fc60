package org.rhumbatron.lifecycle.changes;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.rhumbatron.protocol.IdFormat;

/**
 * The work of a Change: Tasks with dependencies (a DAG) and resource scopes (keys like {@code
 * path:src/api/}). {@link #validate} refuses an empty graph, a duplicate or malformed key, an
 * unknown dependency and a cycle, naming it.
 */
public record WorkGraph(List<TaskSpec> tasks) {

  /** A Task key: what {@code <changeId>:<key>} needs to stay a valid id. */
  static final Pattern KEY = Pattern.compile("^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$");

  private static final Pattern RESOURCE = Pattern.compile(IdFormat.RESOURCE);

  /**
   * One Task of the graph.
   *
   * @param key unique in the graph; the Task id is {@code <changeId>:<key>}
   * @param dependsOn keys of the Tasks that must complete before this one is ready
   * @param resourceScopes resource keys the Task works on, e.g. {@code path:src/api/}
   */
  public record TaskSpec(
      String key, String title, List<String> dependsOn, List<String> resourceScopes) {
    public TaskSpec {
      dependsOn = dependsOn == null ? List.of() : List.copyOf(dependsOn);
      resourceScopes = resourceScopes == null ? List.of() : List.copyOf(resourceScopes);
    }
  }

  public WorkGraph {
    tasks = tasks == null ? List.of() : List.copyOf(tasks);
  }

  public static WorkGraph of(TaskSpec... tasks) {
    return new WorkGraph(List.of(tasks));
  }

  /**
   * Checks the graph; {@code maxTasks} bounds its size.
   *
   * @throws WorkGraphException naming the first problem found
   */
  public WorkGraph validate(int maxTasks) {
    if (tasks.isEmpty()) {
      throw new WorkGraphException("a Change needs at least one Task, the graph is empty");
    }
    if (tasks.size() > maxTasks) {
      throw new WorkGraphException(
          tasks.size() + " Tasks, more than the limit of " + maxTasks + " (changes.tasks-max)");
    }
    Map<String, TaskSpec> byKey = new LinkedHashMap<>();
    for (TaskSpec t : tasks) {
      if (t == null || t.key() == null || !KEY.matcher(t.key()).matches()) {
        throw new WorkGraphException(
            "task key "
                + (t == null ? "null" : "\"" + t.key() + "\"")
                + " is not 1 to 64 letters, digits, '_', '.' or '-' starting with a letter or"
                + " digit");
      }
      if (byKey.putIfAbsent(t.key(), t) != null) {
        throw new WorkGraphException("duplicate task key \"" + t.key() + "\"");
      }
      for (String scope : t.resourceScopes()) {
        if (scope == null || !RESOURCE.matcher(scope).matches()) {
          throw new WorkGraphException(
              "task \""
                  + t.key()
                  + "\" has resource scope "
                  + (scope == null ? "null" : "\"" + scope + "\"")
                  + ": a resource key is 1 to 1024 characters without control characters");
        }
      }
    }
    for (TaskSpec t : tasks) {
      for (String dep : t.dependsOn()) {
        if (!byKey.containsKey(dep)) {
          throw new WorkGraphException(
              "task \"" + t.key() + "\" depends on unknown task \"" + dep + "\"");
        }
        if (dep.equals(t.key())) {
          throw new WorkGraphException("cycle: " + dep + " -> " + dep);
        }
      }
    }
    List<String> cycle = findCycle(byKey);
    if (!cycle.isEmpty()) {
      throw new WorkGraphException("cycle: " + String.join(" -> ", cycle));
    }
    return this;
  }

  /** A cycle as a path that ends where it starts, or empty for a DAG (depth-first search). */
  private static List<String> findCycle(Map<String, TaskSpec> byKey) {
    Map<String, Integer> color = new HashMap<>(); // absent: new, 1: on the path, 2: done
    for (String start : byKey.keySet()) {
      if (color.containsKey(start)) {
        continue;
      }
      Deque<String> path = new ArrayDeque<>();
      Deque<java.util.Iterator<String>> next = new ArrayDeque<>();
      path.push(start);
      next.push(byKey.get(start).dependsOn().iterator());
      color.put(start, 1);
      while (!path.isEmpty()) {
        if (!next.peek().hasNext()) {
          color.put(path.pop(), 2);
          next.pop();
          continue;
        }
        String dep = next.peek().next();
        Integer c = color.get(dep);
        if (c == null) {
          color.put(dep, 1);
          path.push(dep);
          next.push(byKey.get(dep).dependsOn().iterator());
        } else if (c == 1) {
          List<String> onPath = new ArrayList<>(path);
          java.util.Collections.reverse(onPath); // start ... current
          List<String> cycle = new ArrayList<>(onPath.subList(onPath.indexOf(dep), onPath.size()));
          cycle.add(dep);
          return cycle;
        }
      }
    }
    return List.of();
  }
}
