import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import {
  applyCrew,
  crewNamespace,
  crewYaml,
  releaseCrewNamespace,
  sleep,
  startClusterApi,
  type ClusterApi,
} from "./support/fixture.ts";

// The console's lists from the cluster-mode API: crews and a crew's executions read from the informer caches.
// No controller: the executions stay where the kickoff left them, which is all a list needs.
const kubeconfig = inject("kubeconfig");
let namespace: string;
let api: ClusterApi;

beforeAll(async () => {
  namespace = await crewNamespace(kubeconfig, "console");
  await applyCrew(kubeconfig, namespace, crewYaml("listed", "sleep-60000", { tasks: 2 }));
  await applyCrew(kubeconfig, namespace, crewYaml("unlisted", "sleep-60000", { tasks: 1 }));
  api = await startClusterApi(kubeconfig, namespace);
});
afterAll(async () => {
  await api?.stop();
  if (namespace) await releaseCrewNamespace(kubeconfig, namespace);
});

const kickoff = async (crew: string) => {
  const { status, body } = await api.call(`/crews/${crew}/kickoff`, { body: { inputs: { topic: "lists" } } });
  expect(status).toBe(200);
  return body.kickoff_id as string;
};

describe("the console's lists in cluster mode", () => {
  it("GET /crews lists the namespace's crews with their inputs and tasks", async () => {
    const { status, body } = await api.call("/crews");
    expect(status).toBe(200);
    const names = (body.crews as { name: string }[]).map((c) => c.name);
    expect(names).toEqual(expect.arrayContaining(["listed", "unlisted"]));
    const listed = (body.crews as { name: string; inputs: unknown; tasks: unknown[] }[]).find(
      (c) => c.name === "listed",
    )!;
    expect(listed.inputs).toEqual([{ name: "topic", required: true }]);
    expect(listed.tasks).toHaveLength(2);
  });

  it("GET /crews/{crew}/executions lists that crew's CrewExecutions, newest first", async () => {
    const first = await kickoff("listed");
    await kickoff("unlisted");
    // creationTimestamp has a resolution of one second.
    await sleep(1100);
    const second = await kickoff("listed");
    const ids = async () =>
      ((await api.call("/crews/listed/executions")).body.executions as { kickoff_id: string }[]).map(
        (e) => e.kickoff_id,
      );
    // The informer cache catches up with the two creations.
    for (let i = 0; i < 50 && (await ids()).length < 2; i++) await sleep(100);
    expect(await ids()).toEqual([second, first]);
    const [newest] = (await api.call("/crews/listed/executions")).body.executions as Record<string, unknown>[];
    expect(newest).toMatchObject({
      kickoff_id: second,
      requested_by: { kind: "org", subject: api.subject },
      status: "running",
      progress: { completed_tasks: 0, total_tasks: 2 },
    });
    expect(Date.parse(newest!.created as string)).toBeGreaterThan(Date.now() - 60_000);
  });
});
