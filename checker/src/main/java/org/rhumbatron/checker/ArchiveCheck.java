package org.rhumbatron.checker;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.zip.GZIPInputStream;
import org.rhumbatron.platform.bucket.Bucket;
import org.rhumbatron.platform.bucket.BucketObject;
import org.rhumbatron.platform.eventlog.Subscription;

/**
 * Every published Event is in some object of the audit archive, and in one only: an Event in two
 * objects was archived twice. Reads the evidence bucket wherever it is (a directory or the NATS
 * object store).
 */
final class ArchiveCheck {
  static final String NEVER =
      HistoryChecker.APPLIED_NEVER + Subscription.AUDIT_ARCHIVER.durableName();
  static final String TWICE =
      HistoryChecker.APPLIED_TWICE + Subscription.AUDIT_ARCHIVER.durableName();
  private static final ObjectMapper JSON = new ObjectMapper();

  private ArchiveCheck() {}

  /**
   * @param published the ids of the Events the streams hold
   * @param poisonMarkers message ids of poison, which the archive may hold and the check skips
   */
  static void check(
      CheckReport report, Bucket archive, Set<String> published, Set<String> poisonMarkers)
      throws IOException {
    if (archive == null) {
      report.note("the audit archive was not reachable: not checked");
      return;
    }
    report.expect(NEVER);
    report.expect(TWICE);
    Map<String, String> objectOf = new HashMap<>();
    List<BucketObject> objects =
        archive.list("").stream().filter(o -> o.key().endsWith(".ndjson.gz")).toList();
    long lines = 0;
    for (BucketObject object : objects) {
      byte[] bytes = archive.get(object.key()).orElse(new byte[0]);
      try (BufferedReader r =
          new BufferedReader(
              new InputStreamReader(
                  new GZIPInputStream(new ByteArrayInputStream(bytes)), StandardCharsets.UTF_8))) {
        String line;
        while ((line = r.readLine()) != null) {
          lines++;
          JsonNode node = JSON.readTree(line);
          String id = node.path("eventId").asText(null);
          if (id == null || poisonMarkers.contains(node.path("messageId").asText(""))) {
            continue;
          }
          String earlier = objectOf.putIfAbsent(id, object.key());
          if (earlier != null && !earlier.equals(object.key())) {
            report.violation(TWICE, id);
          }
        }
      }
    }
    report.total("archive_objects", objects.size());
    report.total("archive_lines", lines);
    for (String id : published) {
      if (!objectOf.containsKey(id)) {
        report.violation(NEVER, id);
      }
    }
  }
}
