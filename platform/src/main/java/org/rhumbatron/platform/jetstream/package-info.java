/**
 * The JetStream adapter: the streams core creates at start ({@link
 * org.rhumbatron.platform.jetstream.JetStreamTopology}) and how core connects to NATS ({@link
 * org.rhumbatron.platform.jetstream.JetStreamConnections}).
 */
package org.rhumbatron.platform.jetstream;
