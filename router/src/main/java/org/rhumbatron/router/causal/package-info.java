/**
 * The causal-router subscription: claims each Event and hands the fresh ones to {@link
 * org.rhumbatron.router.causal.CausalBatchRouter#routeCausalBatch}, the rules that decide which
 * Agents wake and which Commands run. {@link org.rhumbatron.router.causal.ClefFlash} decides a
 * prefix-only resource overlap with one model call behind {@link
 * org.rhumbatron.router.causal.ModelClient}, whose SDK adapter is {@link
 * org.rhumbatron.router.causal.AnthropicModelClient}.
 */
package org.rhumbatron.router.causal;
