package org.rhumbatron.platform.bucket;

import java.time.Instant;

/**
 * One stored object as a listing shows it.
 *
 * @param key the object's key
 * @param size its length in bytes
 * @param uploadedAt when it was last put, read from the store's injected clock
 */
public record BucketObject(String key, long size, Instant uploadedAt) {}
