package org.rhumbatron.router.causal;

/**
 * The model behind Clef-flash: one question, one answer. The transport SPI of {@link ClefFlash},
 * which owns the budget, the threshold and what each failure means.
 */
@FunctionalInterface
public interface ModelClient {
  /**
   * Asks the model once, without retrying.
   *
   * @throws ModelCallException on a timeout, an error status or transport failure, or an answer
   *     that is not a well-formed decision
   */
  ModelAnswer ask(ClefFlashQuestion question);
}
