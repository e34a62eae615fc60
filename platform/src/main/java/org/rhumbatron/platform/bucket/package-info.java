/**
 * The bucket ({@code rhumbatron-evidence}): a small {@link org.rhumbatron.platform.bucket.Bucket}
 * interface of whole objects under {@code /}-separated keys, with two real stores behind it: a
 * directory on disk ({@link org.rhumbatron.platform.bucket.DirectoryBucket}, the default) and a
 * NATS JetStream object store ({@link org.rhumbatron.platform.bucket.NatsObjectStoreBucket}, for a
 * NATS cluster). Each object keeps its upload time as read from the injected clock, which the
 * archive expiry compares.
 */
package org.rhumbatron.platform.bucket;
