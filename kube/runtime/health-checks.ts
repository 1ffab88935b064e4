import type { HealthChecks } from "./health-server.ts";

/** What the health checks read of an informer. */
export interface WatchedCache {
  lastActivity: number;
  hasSynced: boolean;
}

/**
 * A controller's health from its informers: live while no informer has gone silent for longer than a watch lasts
 * (plus a minute), ready once every informer synced; a standby replica (leader election, not leading) is ready.
 */
export function informerHealthChecks(o: {
  /** The informers, by the name a failed check reports. */
  informers: readonly (readonly [name: string, cache: WatchedCache])[];
  watchTimeoutSeconds: number;
  /** The workers run (this replica leads and started them). */
  running: () => boolean;
  /** A standby replica: leader election on, not leading. */
  standby: () => boolean;
}): HealthChecks {
  const stallLimitMs = (o.watchTimeoutSeconds + 60) * 1000;
  return {
    live: () => {
      if (!o.running()) return undefined;
      const stuck = o.informers.find(([, i]) => Date.now() - i.lastActivity > stallLimitMs);
      return stuck ? `informer ${stuck[0]} has seen no traffic for too long` : undefined;
    },
    ready: () => {
      if (o.standby()) return undefined;
      const unsynced = o.informers.find(([, i]) => !i.hasSynced);
      return unsynced ? `informer ${unsynced[0]} has not synced` : undefined;
    },
  };
}
