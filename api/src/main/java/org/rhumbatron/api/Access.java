package org.rhumbatron.api;

import io.javalin.http.HandlerType;
import java.util.Locale;

/**
 * What a route needs, decided from its method and its path template alone, so that every route,
 * also one added later, has an answer: probes and the dashboard's page are public, reads need a
 * reader (unless reads are open), an Agent's reports need an Agent or a task token, and every other
 * write an operator. {@code openapi.json} names it per operation as {@code x-role}.
 */
public enum Access {
  PUBLIC,
  READ,
  REPORT,
  OPERATE;

  static final String REPORTS = "/api/agents/{agentId}/tasks/{taskId}/";
  static final String TOKENS = "/api/tokens";
  static final String WEBHOOK_SECRETS = "/api/webhooks/secrets";

  /**
   * @param path the matched route's template, e.g. {@code /api/changes/{changeId}}
   * @param metricsClosed whether {@code /metrics} needs a reader ({@code http.metrics-auth})
   */
  public static Access of(HandlerType method, String path, boolean metricsClosed) {
    if (path.equals("/healthz") || path.equals("/readyz")) {
      return PUBLIC; // a load balancer's probe carries no credential
    }
    if (path.equals("/") || path.startsWith("/dashboard/")) {
      return PUBLIC; // the page and its scripts; the data they fetch asks for a credential
    }
    if (path.equals("/metrics")) {
      return metricsClosed ? READ : PUBLIC;
    }
    if (path.startsWith(TOKENS) || path.startsWith(WEBHOOK_SECRETS)) {
      return OPERATE; // even the lists: who holds which credential is the operator's to know
    }
    if (method == HandlerType.GET || method == HandlerType.HEAD || method == HandlerType.OPTIONS) {
      return READ;
    }
    if (method == HandlerType.POST && path.startsWith(REPORTS)) {
      return REPORT;
    }
    return OPERATE;
  }

  /** The least role that passes it, as {@code openapi.json} writes it ({@code x-role}). */
  public String leastRole() {
    return switch (this) {
      case PUBLIC -> "public";
      case READ -> Role.READER.wireName();
      case REPORT -> Role.AGENT.wireName();
      case OPERATE -> Role.OPERATOR.wireName();
    };
  }

  @Override
  public String toString() {
    return name().toLowerCase(Locale.ROOT);
  }
}
