package org.rhumbatron.router.sweep;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;
import org.rhumbatron.platform.config.Settings;
import org.rhumbatron.protocol.EventStreams;

/**
 * One minute's tick: which stream it sweeps ({@code epochMinute mod 8}, so 8 ticks in a row visit
 * every stream once) and whether it is the daily 04:17 UTC maintenance tick or a minute 4, 9, 14
 * ... release sweep tick. A tick that is neither also runs one analytics-projector batch.
 *
 * @param minute the tick's minute (seconds cut off)
 */
public record SweepTick(Instant minute, int streamIndex, boolean daily, boolean releaseSweep) {

  /** The tick of the minute that holds {@code at}. */
  public static SweepTick at(Instant at, Settings settings) {
    Instant minute = at.truncatedTo(ChronoUnit.MINUTES);
    ZonedDateTime utc = minute.atZone(ZoneOffset.UTC);
    long epochMinute = minute.getEpochSecond() / 60;
    int stream = (int) Math.floorMod(epochMinute, (long) EventStreams.STREAM_COUNT);
    boolean daily =
        utc.getHour() == settings.get(Settings.DAILY_TICK_HOUR_UTC)
            && utc.getMinute() == settings.get(Settings.DAILY_TICK_MINUTE_UTC);
    int every = settings.get(Settings.MAINTENANCE_EVERY_MINUTES);
    boolean releaseSweep =
        Math.floorMod(utc.getMinute() - settings.get(Settings.MAINTENANCE_MINUTE_OFFSET), every)
            == 0;
    return new SweepTick(minute, stream, daily, releaseSweep);
  }

  /** "A sweep tick without maintenance or the release sweep also runs one analytics batch." */
  public boolean runsAnalytics() {
    return !daily && !releaseSweep;
  }
}
