/**
 * The chart with the controller's executions sharded over its replicas (controller.shards): the setting reaches the
 * controller, its Role may list and renew the shard and member Leases (and only Leases beyond the defaults), the
 * default stays one leader on one named Lease, and shards without leader election are refused.
 */
import { describe, expect, it } from "vitest";
import type { V1PolicyRule } from "@kubernetes/client-node";
import { chartDir, container, envValue, find, helm, render, template, type Manifest } from "./support/helm.ts";

const rulesOf = (manifests: Manifest[]) =>
  (find(manifests, "Role", "kubecrew-controller").rules ?? []) as V1PolicyRule[];
const leaseRules = (manifests: Manifest[]) => rulesOf(manifests).filter((r) => r.resources?.includes("leases"));
const deployment = (manifests: Manifest[]) => find(manifests, "Deployment", "kubecrew-controller");

describe("controller shards", () => {
  it("defaults to one replica and one shard: the leader Lease alone, by name", () => {
    const manifests = render();
    expect((deployment(manifests).spec as { replicas: number }).replicas).toBe(1);
    expect(envValue(container(deployment(manifests)), "KUBECREW_CONTROLLER_SHARDS")).toBe("1");
    expect(leaseRules(manifests)).toEqual([
      { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["create"] },
      {
        apiGroups: ["coordination.k8s.io"],
        resources: ["leases"],
        resourceNames: ["kubecrew-controller"],
        verbs: ["get", "update"],
      },
    ]);
  });

  it("three replicas over three shards: the count reaches the controller, which may list, renew and remove Leases", () => {
    const manifests = render({ values: { controller: { replicas: 3, shards: 3 } } });
    expect((deployment(manifests).spec as { replicas: number }).replicas).toBe(3);
    const c = container(deployment(manifests));
    expect(envValue(c, "KUBECREW_CONTROLLER_SHARDS")).toBe("3");
    expect(envValue(c, "KUBECREW_LEADER_ELECT")).toBe("true");
    expect(leaseRules(manifests)).toEqual([
      { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["create"] },
      { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["get", "list", "update", "delete"] },
    ]);
    // Nothing else widens: the rest of the Role is the default one.
    const others = (m: Manifest[]) => rulesOf(m).filter((r) => !r.resources?.includes("leases"));
    expect(others(manifests)).toEqual(others(render()));
  });

  it("refuses shards without leader election, and a shard count outside 1–64", () => {
    const unelected = template({ values: { controller: { shards: 2, leaderElection: { enabled: false } } } });
    expect(unelected.status).not.toBe(0);
    expect(unelected.stderr).toContain("controller.shards > 1 needs controller.leaderElection.enabled=true");
    for (const shards of [0, 65]) {
      const result = template({ values: { controller: { shards } } });
      expect(result.status).not.toBe(0);
      expect(result.stderr).toContain("shards");
    }
  });

  it("NOTES name the Leases to look at when sharded, and say nothing of shards otherwise", () => {
    const notesOf = (...args: string[]) => {
      const result = helm(["install", "kubecrew", chartDir, "--dry-run=client", "--namespace", "crews", ...args]);
      expect(result.status).toBe(0);
      return result.stdout.slice(result.stdout.indexOf("NOTES:"));
    };
    const sharded = notesOf("--set", "controller.replicas=2", "--set", "controller.shards=4");
    expect(sharded).toContain("The controller's 2 replica(s) share 4 shards of executions");
    expect(sharded).toContain("kubectl -n crews get leases -l kubecrew.io/controller-leases=kubecrew-controller\n");
    expect(notesOf()).not.toContain("shards");
  });
});
