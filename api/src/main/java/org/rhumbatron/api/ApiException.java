package org.rhumbatron.api;

import org.rhumbatron.protocol.RhumbatronException;

/**
 * A request the API refuses, with its HTTP status and, for a bad request, the field it names
 * ({@code tasks[2].key}, or null). Answered as {@code {"error": message, "field": field}}.
 */
final class ApiException extends RhumbatronException {
  private final int status;
  private final String field;

  ApiException(int status, String field, String message) {
    super(message);
    this.status = status;
    this.field = field;
  }

  int status() {
    return status;
  }

  String field() {
    return field;
  }

  /** 400: {@code field} breaks {@code rule}. */
  static ApiException badRequest(String field, String rule) {
    return new ApiException(400, field, field == null ? rule : "field " + field + ": " + rule);
  }

  static ApiException notFound(String what) {
    return new ApiException(404, null, what);
  }

  static ApiException conflict(String why) {
    return new ApiException(409, null, why);
  }

  static ApiException tooLarge(long limit) {
    return new ApiException(413, null, "request body larger than " + limit + " bytes");
  }
}
