/**
 * The operator CLI: {@code rhumbatron projects|changes|dead-letters|outbox|streams}, a thin client
 * of a running core's HTTP API that prints tables for people and the API's JSON for scripts.
 */
package org.rhumbatron.cli;
