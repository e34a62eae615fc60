/**
 * The audit archive (the seed's {@code audit-archiver} and the object expiry): each fetched batch
 * of a stream becomes one gzip NDJSON object under {@link org.rhumbatron.router.archive.ArchiveKey}
 * in the {@code rhumbatron-evidence} bucket, and {@link
 * org.rhumbatron.router.archive.ArchiveExpiry} deletes archive objects 365 days after their upload.
 */
package org.rhumbatron.router.archive;
