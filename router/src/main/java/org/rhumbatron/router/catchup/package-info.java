/**
 * Keeping the audit-archiver and analytics-projector up with their streams: the sampled lag of each
 * stream's consumers, and when a stream is behind enough to read more batches.
 */
package org.rhumbatron.router.catchup;
