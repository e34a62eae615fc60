package org.rhumbatron.app;

import java.util.List;
import org.rhumbatron.platform.config.Nearest;
import picocli.CommandLine.MissingParameterException;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.TypeConversionException;
import picocli.CommandLine.UnmatchedArgumentException;

/** A bad command line in one line: what is wrong, a "did you mean" where one is close. */
public final class UsageErrors {
  private UsageErrors() {}

  public static String oneLine(ParameterException e) {
    List<String> stray = e.getCommandLine().getUnmatchedArguments();
    if (e instanceof MissingParameterException && !stray.isEmpty()) {
      // "--projet p" leaves --project missing; the typo is the mistake to point at.
      e = new UnmatchedArgumentException(e.getCommandLine(), stray);
    }
    if (e instanceof UnmatchedArgumentException unmatched) {
      // picocli's suggestions are loose ("stream": streams, core, dead-letters); keep the nearest.
      String typed = unmatched.getUnmatched().isEmpty() ? "" : unmatched.getUnmatched().get(0);
      String hint =
          Nearest.of(typed, unmatched.getSuggestions())
              .map(n -> "; did you mean " + n + "?")
              .orElse("");
      return e.getMessage() + hint + " (see --help)";
    }
    Throwable cause = e.getCause();
    // A converter's own IllegalArgumentException says what the value should be; picocli would
    // print it as "cannot convert '180' to Duration (java.lang.IllegalArgumentException: ...)".
    if (e.getArgSpec() != null
        && e.getArgSpec().isOption()
        && cause instanceof IllegalArgumentException
        && !(cause instanceof TypeConversionException)
        && cause.getMessage() != null) {
      String option = ((picocli.CommandLine.Model.OptionSpec) e.getArgSpec()).longestName();
      return option + " '" + e.getValue() + "': " + cause.getMessage() + " (see --help)";
    }
    return e.getMessage() + " (see --help)";
  }
}
