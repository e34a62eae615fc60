/**
 * The protocol of Rhumbatron core: what travels on the event log and on the queues, and nothing
 * that moves it.
 *
 * <p>This package owns the two envelopes ({@link org.rhumbatron.protocol.Event}, {@link
 * org.rhumbatron.protocol.Command}) and the dead-letter wrapper ({@link
 * org.rhumbatron.protocol.DeadLetterMessage}); the closed lists ({@link
 * org.rhumbatron.protocol.EventType}, {@link org.rhumbatron.protocol.CommandType}, {@link
 * org.rhumbatron.protocol.Queue}); the stable keys of every retry boundary ({@link
 * org.rhumbatron.protocol.StableIds}); the stream mapping ({@link org.rhumbatron.protocol.Fnv1a},
 * {@link org.rhumbatron.protocol.EventStreams}); the header names ({@link
 * org.rhumbatron.protocol.Headers}); and the JSON codec that checks every envelope against the JSON
 * Schema files in {@code schemas/} on the way in and on the way out ({@link
 * org.rhumbatron.protocol.EnvelopeCodec}).
 *
 * <p>It does no I/O: no files, no network, no clock. It reads only its own schema resources from
 * the classpath; timestamps and random UUIDs come in as values. An ArchUnit test holds it to that.
 */
package org.rhumbatron.protocol;
