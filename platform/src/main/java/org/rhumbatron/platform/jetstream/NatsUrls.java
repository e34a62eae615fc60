package org.rhumbatron.platform.jetstream;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The servers of {@code --nats} (or the setting {@code nats.url}): one URL, or the URLs of a
 * cluster separated by commas. The client connects to any of them and fails over to the others.
 */
public final class NatsUrls {
  /** What an error says a URL looks like. */
  public static final String FORM =
      "write nats://HOST:PORT (tls://, ws:// and wss:// too), several comma separated";

  private static final Set<String> SCHEMES = Set.of("nats", "tls", "opentls", "ws", "wss");

  private NatsUrls() {}

  /**
   * The URLs of {@code urls}, each stripped of blanks around it.
   *
   * @throws IllegalArgumentException naming the first bad entry: {@code 'nats:/x': not a NATS URL;
   *     write ...}, or {@code entry N is empty; write ...}
   */
  public static List<String> parse(String urls) {
    if (urls == null || urls.isBlank()) {
      throw new IllegalArgumentException("no NATS URL given; " + FORM);
    }
    String[] entries = urls.split(",", -1);
    List<String> out = new ArrayList<>();
    for (int i = 0; i < entries.length; i++) {
      String url = entries[i].strip();
      if (url.isEmpty()) {
        throw new IllegalArgumentException(
            "entry " + (i + 1) + " of '" + urls.strip() + "' is empty; " + FORM);
      }
      if (!valid(url)) {
        throw new IllegalArgumentException("'" + url + "': not a NATS URL; " + FORM);
      }
      out.add(url);
    }
    return List.copyOf(out);
  }

  /** nats://HOST:PORT (or tls, ws, wss), or HOST:PORT, or HOST. */
  private static boolean valid(String url) {
    if (url.contains("://")) {
      try {
        URI uri = new URI(url);
        return SCHEMES.contains(uri.getScheme()) && uri.getHost() != null;
      } catch (URISyntaxException e) {
        return false;
      }
    }
    return url.matches("[A-Za-z0-9.\\-]+(:\\d+)?");
  }
}
