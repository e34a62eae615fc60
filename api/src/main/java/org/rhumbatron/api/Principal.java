package org.rhumbatron.api;

import io.javalin.http.Context;
import java.util.Optional;

/**
 * Whom a request was admitted for, on the request's context; absent for an open read.
 *
 * @param credentialId the stored credential's id, {@code api.token}, or null for a task token
 * @param name the name the operator gave the credential, or null for a task token
 * @param taskToken the bearer value of a task token, which the report routes verify against the
 *     Task attempt; null for every other role
 */
public record Principal(Role role, String credentialId, String name, String taskToken) {
  static final String ATTRIBUTE = "rhumbatron.principal";

  public Principal {
    if (role == null) {
      throw new IllegalArgumentException("a principal needs a role");
    }
    if ((role == Role.TASK) != (taskToken != null)) {
      throw new IllegalArgumentException("a task token is the credential of role task alone");
    }
  }

  /** The principal the request was admitted for; empty for a read that needed no credential. */
  public static Optional<Principal> of(Context ctx) {
    return Optional.ofNullable(ctx.attribute(ATTRIBUTE));
  }

  // A task token is a credential: never in a log line or an error.
  @Override
  public String toString() {
    return "Principal[" + role.wireName() + (name == null ? "" : " " + name) + "]";
  }
}
