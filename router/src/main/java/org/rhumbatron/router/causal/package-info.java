/**
 * The causal-router subscription: claims each Event and hands the fresh ones to {@link
 * org.rhumbatron.router.causal.CausalBatchRouter#routeCausalBatch}, the rules that decide which
 * Agents wake and which Commands run.
 */
package org.rhumbatron.router.causal;
