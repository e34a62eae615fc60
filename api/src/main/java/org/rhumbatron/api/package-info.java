/**
 * Core's HTTP API (docs/api.md, {@code /openapi.json}): thin handlers over {@link
 * org.rhumbatron.lifecycle.Lifecycle}, the dead-letter operator, the database's read models and
 * JetStream's stream state; the agent endpoints through which Agents outside core report; the
 * bearer-token check of every write, and the one error shape {@code {"error", "field"}}.
 */
package org.rhumbatron.api;
