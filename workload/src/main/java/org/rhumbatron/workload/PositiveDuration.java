package org.rhumbatron.workload;

import java.time.Duration;
import org.rhumbatron.platform.config.Setting;
import picocli.CommandLine.ITypeConverter;

/** {@code 30s}, {@code 5m}, {@code 500ms}, {@code 2h} or ISO-8601, as in the settings; above 0. */
public final class PositiveDuration implements ITypeConverter<Duration> {
  @Override
  public Duration convert(String value) {
    Duration d = Setting.parseDuration(value);
    if (d.isNegative() || d.isZero()) {
      throw new IllegalArgumentException("a positive duration like 30s, 5m or PT30S");
    }
    return d;
  }
}
