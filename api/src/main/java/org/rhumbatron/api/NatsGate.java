package org.rhumbatron.api;

/**
 * Whether core can use NATS now. Core started while NATS was down serves the API at once; a request
 * that needs NATS before core connected is answered 503 up front, before it writes anything.
 */
@FunctionalInterface
public interface NatsGate {
  /** Why NATS cannot be used yet, naming its URL; null when it can. */
  String notReady();

  /** Throws the 503 answer when NATS cannot be used yet. */
  default void require() {
    String why = notReady();
    if (why != null) {
      throw new ApiException(503, null, why);
    }
  }
}
