/**
 * The scheduled handler: a tick at the start of each minute sweeps one stream (each stream every 8
 * minutes) and runs the housekeeping ticks of the seed's "Sweep housekeeping".
 */
package org.rhumbatron.router.sweep;
