package org.rhumbatron.server;

import org.rhumbatron.coordinator.Coordinator;
import org.rhumbatron.lifecycle.Lifecycle;
import org.rhumbatron.platform.cluster.DutyOwnership;
import org.rhumbatron.platform.db.Database;
import org.rhumbatron.platform.natsserver.PrivateNatsServer;
import org.rhumbatron.router.causal.ClefFlash;

/**
 * Core's object graph as {@link CoreWiring} built it: what {@link CoreService} serves and closes.
 *
 * @param sqliteLock null unless the database is a SQLite file
 * @param privateNats null when core was given a NATS of its own ({@code --nats})
 * @param natsWait null when NATS answered at the start
 * @param tracingInstalled null unless spans are exported
 */
record CoreParts(
    DataDirLock dataLock,
    DataDirLock sqliteLock,
    PrivateNatsServer privateNats,
    Database database,
    DutyOwnership ownership,
    ClefFlash clefFlash,
    Coordinator coordinator,
    CommandQueues queues,
    Lifecycle lifecycle,
    NatsSide natsSide,
    NatsStartWait natsWait,
    HttpServer http,
    AutoCloseable tracingInstalled,
    AutoCloseable tracing) {}
