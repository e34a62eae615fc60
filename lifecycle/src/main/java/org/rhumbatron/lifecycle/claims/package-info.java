/**
 * Intents, claims and active scopes of a Project's resource keys, each on the shard of its key:
 * acquired and released for an Agent's Task, expired by the shard's alarm ({@code ResourceLedger}),
 * and the scopes of active Agents the causal router matches ({@code ActiveScopes}).
 */
package org.rhumbatron.lifecycle.claims;
