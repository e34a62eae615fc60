package org.rhumbatron.platform.config;

import java.util.Collection;
import java.util.Locale;
import java.util.Optional;

/** The known name closest to a mistyped one, for a "did you mean" (edit distance). */
public final class Nearest {
  private Nearest() {}

  /**
   * The name of {@code known} fewest edits away from {@code typed} (ignoring case), if it is close:
   * at most a third of the typed name's length changed, and at least two edits allowed.
   */
  public static Optional<String> of(String typed, Collection<String> known) {
    String best = null;
    int bestDistance = Integer.MAX_VALUE;
    for (String name : known) {
      int d = distance(typed.toLowerCase(Locale.ROOT), name.toLowerCase(Locale.ROOT));
      if (d < bestDistance || (d == bestDistance && name.compareTo(best) < 0)) {
        best = name;
        bestDistance = d;
      }
    }
    int allowed = Math.max(2, typed.length() / 3);
    return best != null && bestDistance <= allowed ? Optional.of(best) : Optional.empty();
  }

  /** Levenshtein distance: insertions, deletions and substitutions. */
  static int distance(String a, String b) {
    int[] previous = new int[b.length() + 1];
    int[] current = new int[b.length() + 1];
    for (int j = 0; j <= b.length(); j++) {
      previous[j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      current[0] = i;
      for (int j = 1; j <= b.length(); j++) {
        int substitute = previous[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
        current[j] = Math.min(substitute, Math.min(previous[j], current[j - 1]) + 1);
      }
      int[] swap = previous;
      previous = current;
      current = swap;
    }
    return previous[b.length()];
  }
}
