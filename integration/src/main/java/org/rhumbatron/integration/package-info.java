/**
 * The integration module (the seed's {@code workers/integration}): one handler, {@link
 * org.rhumbatron.integration.IntegrationConsumer}, for the integration, verification and release
 * queues.
 */
package org.rhumbatron.integration;
