package org.rhumbatron.protocol;

/**
 * An envelope, or a value meant for one, broke a rule: bad JSON, a missing or wrongly typed field,
 * an unknown type name, an oversized payload, or a constructor check.
 *
 * <p>{@link #field()} is a JSON Pointer into the envelope ({@code /eventType}, {@code
 * /payload/items/3}), or {@link #WHOLE_ENVELOPE} when the input as a whole is at fault (not JSON,
 * truncated, too large). {@link #rule()} is the JSON Schema keyword that failed ({@code required},
 * {@code type}, {@code enum}, {@code pattern}, ...) or one of the codec's own rules below. The
 * message names both, so a log line alone says what to fix.
 */
public final class EnvelopeException extends RhumbatronException {

  /** The {@link #field()} of an error about the input as a whole. */
  public static final String WHOLE_ENVELOPE = "envelope";

  public static final String REQUIRED = "required";
  public static final String TYPE = "type";
  public static final String ENUM = "enum";
  public static final String PATTERN = "pattern";
  public static final String MINIMUM = "minimum";
  public static final String MAXIMUM = "maximum";
  public static final String MAX_LENGTH = "maxLength";
  public static final String ADDITIONAL_PROPERTIES = "additionalProperties";

  /** The input is not one complete JSON document (garbage, truncated, duplicate keys). */
  public static final String JSON = "json";

  /** The payload, or the whole input, is larger than the codec allows. */
  public static final String MAX_BYTES = "maxBytes";

  /** The payload nests deeper than {@link Payloads#MAX_DEPTH}. */
  public static final String MAX_DEPTH = "maxDepth";

  /** A payload number is NaN or infinite, which JSON cannot carry. */
  public static final String FINITE = "finite";

  /** A string holds an unpaired surrogate, which has no UTF-8 form. */
  public static final String UNICODE = "unicode";

  /** A timestamp lies outside the years 0000 to 9999 that RFC 3339 can write. */
  public static final String RANGE = "range";

  /** Two fields disagree, e.g. a deadline before createdAt. */
  public static final String ORDER = "order";

  private final String field;
  private final String rule;

  public EnvelopeException(String field, String rule, String detail) {
    this(field, rule, detail, null);
  }

  public EnvelopeException(String field, String rule, String detail, Throwable cause) {
    super(describe(orEnvelope(field), orUnknown(rule), detail), cause);
    this.field = orEnvelope(field);
    this.rule = orUnknown(rule);
  }

  /** JSON Pointer of the offending field, or {@link #WHOLE_ENVELOPE}; never empty. */
  public String field() {
    return field;
  }

  /** The rule that failed: a JSON Schema keyword or one of this class's constants; never empty. */
  public String rule() {
    return rule;
  }

  private static String describe(String field, String rule, String detail) {
    String text = field + " violates rule '" + rule + "'";
    return detail == null || detail.isEmpty() ? text : text + ": " + detail;
  }

  private static String orEnvelope(String field) {
    return field == null || field.isEmpty() ? WHOLE_ENVELOPE : field;
  }

  private static String orUnknown(String rule) {
    return rule == null || rule.isEmpty() ? "unknown" : rule;
  }
}
