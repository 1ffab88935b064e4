import { describe, expect, it } from "vitest";
import { controllerConfigFromEnv } from "./config.ts";

describe("controller config", () => {
  it("reads the webhook signing key from the Secrets' key `secret` unless told another", () => {
    expect(controllerConfigFromEnv({}).webhooks.secretKey).toBe("secret");
    expect(controllerConfigFromEnv({ KUBECREW_WEBHOOK_SECRET_KEY: "hmac" }).webhooks.secretKey).toBe("hmac");
  });

  it("limits tasks starting at once to 300 unless told otherwise; 0 is no limit, a negative count stops it", () => {
    expect(controllerConfigFromEnv({}).maxStartingTasks).toBe(300);
    expect(controllerConfigFromEnv({ KUBECREW_CONTROLLER_MAX_STARTING_TASKS: "0" }).maxStartingTasks).toBe(0);
    expect(() => controllerConfigFromEnv({ KUBECREW_CONTROLLER_MAX_STARTING_TASKS: "-1" })).toThrow(
      /KUBECREW_CONTROLLER_MAX_STARTING_TASKS/,
    );
  });

  it("keeps a quarter as many workers again for urgent keys unless told how many; at least one", () => {
    expect(controllerConfigFromEnv({}).urgentWorkers).toBe(8);
    expect(controllerConfigFromEnv({ KUBECREW_CONTROLLER_WORKERS: "2" }).urgentWorkers).toBe(1);
    expect(controllerConfigFromEnv({ KUBECREW_CONTROLLER_URGENT_WORKERS: "32" }).urgentWorkers).toBe(32);
    expect(() => controllerConfigFromEnv({ KUBECREW_CONTROLLER_URGENT_WORKERS: "0" })).toThrow(
      /KUBECREW_CONTROLLER_URGENT_WORKERS/,
    );
  });

  it("runs one shard (the leader Lease alone) unless told otherwise; shards need leases", () => {
    expect(controllerConfigFromEnv({}).sharding).toEqual({
      shards: 1,
      leaseDurationSeconds: 8,
      renewDeadlineSeconds: 6,
      retryPeriodSeconds: 2,
    });
    expect(controllerConfigFromEnv({ KUBECREW_CONTROLLER_SHARDS: "3" }).sharding.shards).toBe(3);
    expect(() => controllerConfigFromEnv({ KUBECREW_CONTROLLER_SHARDS: "0" })).toThrow(/KUBECREW_CONTROLLER_SHARDS/);
    expect(() => controllerConfigFromEnv({ KUBECREW_CONTROLLER_SHARDS: "2", KUBECREW_LEADER_ELECT: "false" })).toThrow(
      /KUBECREW_CONTROLLER_SHARDS: more than 1 shard needs KUBECREW_LEADER_ELECT=true/,
    );
    expect(() =>
      controllerConfigFromEnv({
        KUBECREW_SHARD_LEASE_DURATION_SECONDS: "5",
        KUBECREW_SHARD_RENEW_DEADLINE_SECONDS: "5",
      }),
    ).toThrow(/KUBECREW_SHARD_RENEW_DEADLINE_SECONDS/);
  });
});
