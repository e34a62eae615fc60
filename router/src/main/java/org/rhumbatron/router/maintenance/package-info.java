/**
 * The two bounded housekeeping jobs of the every-minute sweep (the seed's {@code maintenance.ts}):
 * the daily 04:17 UTC tick and the minute 4, 9, 14 ... tick, each with its caps; and the retention
 * purges both ticks run, which delete every row past its table's horizon, 5,000 per transaction.
 */
package org.rhumbatron.router.maintenance;
