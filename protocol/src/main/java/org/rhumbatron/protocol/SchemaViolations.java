package org.rhumbatron.protocol;

import com.networknt.schema.ValidationMessage;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Turns the validator's messages into one {@link EnvelopeException}: the first violation in a fixed
 * order gives {@code field()} and {@code rule()}, and the message lists up to five more, so the
 * same bad input always gives the same error.
 */
final class SchemaViolations {

  private static final int LISTED = 5;

  // Keywords whose message sits on the object but is about one named property of it.
  private static final Set<String> PROPERTY_KEYWORDS =
      Set.of("required", "additionalProperties", "dependentRequired", "unevaluatedProperties");

  private SchemaViolations() {}

  record Violation(String field, String rule, String detail) {}

  static EnvelopeException toException(Collection<ValidationMessage> messages) {
    List<Violation> violations =
        messages.stream()
            .map(SchemaViolations::violation)
            .sorted(Comparator.comparing(Violation::field).thenComparing(Violation::rule))
            .distinct()
            .collect(Collectors.toList());
    Violation first = violations.get(0);
    String detail = first.detail();
    if (violations.size() > 1) {
      detail +=
          violations.stream()
              .skip(1)
              .limit(LISTED)
              .map(v -> v.field() + " (" + v.rule() + ")")
              .collect(Collectors.joining(", ", "; also ", ""));
      if (violations.size() > LISTED + 1) {
        detail += " and " + (violations.size() - LISTED - 1) + " more";
      }
    }
    return new EnvelopeException(first.field(), first.rule(), detail);
  }

  static Violation violation(ValidationMessage message) {
    String location =
        message.getInstanceLocation() == null ? "" : message.getInstanceLocation().toString();
    String rule = message.getType() == null ? "schema" : message.getType();
    String field = location;
    String property = message.getProperty();
    if (property != null && PROPERTY_KEYWORDS.contains(rule)) {
      String child = "/" + Payloads.escape(property);
      if (!location.endsWith(child)) {
        field = location + child;
      }
    }
    if (field.isEmpty()) {
      field = EnvelopeException.WHOLE_ENVELOPE;
    }
    return new Violation(field, rule, detail(message, location));
  }

  private static String detail(ValidationMessage message, String location) {
    if ("enum".equals(message.getType()) && message.getInstanceNode() != null) {
      // The validator lists every allowed name (41 Event types); the rejected value says more.
      return Check.abbreviate(message.getInstanceNode().toString())
          + " is not one of the names the schema allows";
    }
    String text = message.getMessage() == null ? "" : message.getMessage();
    String prefix = location + ": ";
    return text.startsWith(prefix) ? text.substring(prefix.length()) : text;
  }
}
