/**
 * Core's HTTP API (docs/api.md, {@code /openapi.json}): thin handlers over {@link
 * org.rhumbatron.lifecycle.Lifecycle}, the dead-letter operator, the database's read models and
 * JetStream's stream state; the agent endpoints through which Agents outside core report; the
 * credentials and their roles (operator, reader, Agent, task token) that every route needs one of,
 * and the one error shape {@code {"error", "field"}}.
 */
package org.rhumbatron.api;
