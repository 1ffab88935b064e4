import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KubeClient, type KubeObject } from "../../kube/runtime/client.ts";
import { CREW_EXECUTIONS, resourcePath } from "../../kube/resources.ts";
import { readStatusWrites } from "../../bench/controller-scale-audit.ts";
import { benchCluster, type BenchCluster } from "../../bench/controller-support.ts";

/**
 * hack/local-cluster.sh's KUBECREW_CLUSTER_AUDIT on a control plane of its own, read as bench:controller-scale reads
 * it: the status write that marked a task done, when the apiserver received and answered it, and the ones it refused.
 */
describe("the apiserver's audit log of CrewExecution status writes", () => {
  const dir = mkdtempSync(join(tmpdir(), "kubecrew-audit-test-"));
  const log = join(dir, "audit.log");
  let cluster: BenchCluster | undefined;
  let client: KubeClient;

  beforeAll(() => {
    cluster = benchCluster(["--no-node"], { KUBECREW_CLUSTER_AUDIT: log });
    client = new KubeClient(cluster.kubeConfig);
  });

  afterAll(() => {
    client?.close();
    cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("holds the write that marked the task Succeeded, received before answered, and the stale one refused", async () => {
    const statusPath = resourcePath(CREW_EXECUTIONS, "default", "audited", "status");
    const before = Date.now();
    const created = await client.create<KubeObject>(resourcePath(CREW_EXECUTIONS, "default"), {
      apiVersion: CREW_EXECUTIONS.apiVersion,
      kind: CREW_EXECUTIONS.kind,
      metadata: { name: "audited", namespace: "default" },
      spec: { crewRef: { name: "research" }, inputs: { topic: "audit" } },
    });
    const running = await client.mergePatch<KubeObject>(statusPath, {
      metadata: { resourceVersion: created.metadata!.resourceVersion },
      status: { phase: "Running", tasks: [{ name: "research", phase: "Running" }] },
    });
    // A write computed from the object as created, after the status changed: the apiserver answers 409.
    await expect(
      client.mergePatch(statusPath, {
        metadata: { resourceVersion: created.metadata!.resourceVersion },
        status: { tasks: [{ name: "research", phase: "Succeeded" }] },
      }),
    ).rejects.toMatchObject({ statusCode: 409 });
    await client.mergePatch(statusPath, {
      metadata: { resourceVersion: running.metadata!.resourceVersion },
      status: { phase: "Succeeded", tasks: [{ name: "research", phase: "Succeeded" }] },
    });
    const after = Date.now();

    const audited = await readStatusWrites(log, "default");
    expect(audited.writes).toBe(3);
    expect(audited.refused).toEqual(new Map([[409, 1]]));
    expect([...audited.committed.keys()]).toEqual(["audited/0"]);
    const write = audited.committed.get("audited/0")!;
    // The same machine's wall clock: the bench's ms against the log's µs.
    expect(write.received).toBeGreaterThanOrEqual(before - 1);
    expect(write.answered).toBeGreaterThanOrEqual(write.received);
    expect(write.answered).toBeLessThanOrEqual(after + 1);
    expect(await readStatusWrites(log, "elsewhere")).toMatchObject({ writes: 0, committed: new Map() });
  });
});
