package org.rhumbatron.platform.db;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Splits a migration script into statements at top-level {@code ;}. Knows quoted strings and
 * identifiers, {@code --} and block comments, PostgreSQL dollar quotes, and the BEGIN ... END body
 * of a SQLite {@code CREATE TRIGGER}.
 */
final class SqlScript {

  /** One statement and the line it starts on. */
  record Statement(String sql, int line) {}

  private SqlScript() {}

  static List<Statement> split(String script) {
    List<Statement> out = new ArrayList<>();
    StringBuilder current = new StringBuilder();
    int line = 1;
    int startLine = 1;
    int depth = 0; // BEGIN/CASE ... END nesting inside a trigger
    int i = 0;
    int n = script.length();
    while (i < n) {
      char c = script.charAt(i);
      if (current.toString().isBlank()) {
        startLine = line;
      }
      if (c == '\'' || c == '"' || c == '`') {
        int end = closing(script, i, c);
        line += count(script, i, end);
        current.append(script, i, end);
        i = end;
      } else if (c == '-' && i + 1 < n && script.charAt(i + 1) == '-') {
        int end = script.indexOf('\n', i);
        i = end < 0 ? n : end; // comments are dropped; the newline is kept
      } else if (c == '/' && i + 1 < n && script.charAt(i + 1) == '*') {
        int end = script.indexOf("*/", i + 2);
        end = end < 0 ? n : end + 2;
        line += count(script, i, end);
        current.append(' ');
        i = end;
      } else if (c == '$' && dollarTag(script, i) != null) {
        String tag = dollarTag(script, i);
        int end = script.indexOf(tag, i + tag.length());
        end = end < 0 ? n : end + tag.length();
        line += count(script, i, end);
        current.append(script, i, end);
        i = end;
      } else if (Character.isLetter(c) || c == '_') {
        int end = i;
        while (end < n
            && (Character.isLetterOrDigit(script.charAt(end)) || script.charAt(end) == '_')) {
          end++;
        }
        String word = script.substring(i, end).toUpperCase(Locale.ROOT);
        if (isTrigger(current)) {
          if (word.equals("BEGIN") || word.equals("CASE")) {
            depth++;
          } else if (word.equals("END") && depth > 0) {
            depth--;
          }
        }
        current.append(script, i, end);
        i = end;
      } else if (c == ';' && depth == 0) {
        add(out, current, startLine);
        current.setLength(0);
        i++;
      } else {
        if (c == '\n') {
          line++;
        }
        current.append(c);
        i++;
      }
    }
    add(out, current, startLine);
    return out;
  }

  private static void add(List<Statement> out, StringBuilder current, int line) {
    String sql = current.toString().strip();
    if (!sql.isEmpty()) {
      out.add(new Statement(sql, line));
    }
  }

  private static boolean isTrigger(StringBuilder current) {
    String head = current.toString().strip().toUpperCase(Locale.ROOT).replaceAll("\\s+", " ");
    return head.startsWith("CREATE TRIGGER")
        || head.startsWith("CREATE TEMP TRIGGER")
        || head.startsWith("CREATE TEMPORARY TRIGGER");
  }

  /** Index just past the closing quote; a doubled quote is an escaped one. */
  private static int closing(String s, int open, char quote) {
    int i = open + 1;
    while (i < s.length()) {
      if (s.charAt(i) == quote) {
        if (i + 1 < s.length() && s.charAt(i + 1) == quote) {
          i += 2;
          continue;
        }
        return i + 1;
      }
      i++;
    }
    return s.length();
  }

  /** {@code $$} or {@code $tag$} starting at {@code i}, else null. */
  private static String dollarTag(String s, int i) {
    int j = i + 1;
    while (j < s.length() && (Character.isLetterOrDigit(s.charAt(j)) || s.charAt(j) == '_')) {
      j++;
    }
    if (j < s.length()
        && s.charAt(j) == '$'
        && (j == i + 1 || !Character.isDigit(s.charAt(i + 1)))) {
      return s.substring(i, j + 1);
    }
    return null;
  }

  private static int count(String s, int from, int to) {
    int lines = 0;
    for (int k = from; k < to; k++) {
      if (s.charAt(k) == '\n') {
        lines++;
      }
    }
    return lines;
  }
}
