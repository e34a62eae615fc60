package org.rhumbatron.api;

import io.javalin.Javalin;
import io.javalin.http.Context;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.rhumbatron.platform.cluster.ClusterView;
import org.rhumbatron.platform.cluster.DutyOwnership;

/**
 * {@code GET /api/cluster}: the nodes that share this database (id, HTTP address, last heartbeat on
 * the database's clock, state) and who holds which duty at which epoch.
 */
final class ClusterRoutes {
  private final Supplier<DutyOwnership> ownership;

  ClusterRoutes(Supplier<DutyOwnership> ownership) {
    this.ownership = ownership;
  }

  void mount(Javalin app) {
    app.get("/api/cluster", this::cluster);
  }

  private void cluster(Context ctx) {
    ClusterView view = ownership.get().view();
    List<Map<String, Object>> nodes =
        view.nodes().stream()
            .map(
                n ->
                    Json.object(
                        "nodeId",
                        n.nodeId(),
                        "address",
                        n.address(),
                        "startedAt",
                        Json.time(n.startedAt()),
                        "lastHeartbeat",
                        Json.time(n.lastHeartbeat()),
                        "state",
                        n.state().dbName()))
            .toList();
    List<Map<String, Object>> duties =
        view.duties().stream()
            .map(
                d ->
                    Json.object(
                        "duty",
                        d.duty().key(),
                        "owner",
                        d.owner(),
                        "epoch",
                        d.epoch(),
                        "expiresAt",
                        Json.time(d.expiresAt())))
            .toList();
    Json.answer(ctx, 200, Json.object("nodeId", view.nodeId(), "nodes", nodes, "duties", duties));
  }
}
