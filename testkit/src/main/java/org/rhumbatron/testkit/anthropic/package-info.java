/**
 * A local stand-in for the Anthropic Messages API ({@link
 * org.rhumbatron.testkit.anthropic.FakeMessagesApi}), so that a model client is tested against real
 * HTTP and real JSON without the real service.
 */
package org.rhumbatron.testkit.anthropic;
