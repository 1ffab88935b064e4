import { readdir, readFile } from "node:fs/promises";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { RunningDev } from "../../../dev/start.ts";
import { crewYaml, startTestDev, tokens, waitFor } from "../../support/dev-server.ts";

/** `kubecrew dev` with KUBECREW_DEV_MAX_TASKS=1: task processes of all executions run one at a time. */
let dev: RunningDev;
beforeAll(async () => {
  dev = await startTestDev(
    { "queued.yaml": crewYaml("queued", "sleep-1000", { tasks: 2 }) },
    { env: { KUBECREW_DEV_MAX_TASKS: "1" } },
  );
});
afterAll(() => dev?.stop());

/** Runner processes of these executions alive now, found by their assignment path (…/<kickoff_id>/<index>/…). */
async function runnersOf(ids: string[]): Promise<string[]> {
  const found: string[] = [];
  for (const pid of await readdir("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    const argv = await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "");
    if (!argv.includes("\0runner\0")) continue;
    const id = ids.find((i) => argv.includes(`/${i}/`));
    if (id) found.push(id);
  }
  return found;
}

const kickoff = async () => {
  const res = await fetch(`${dev.url}/crews/queued/kickoff`, {
    method: "POST",
    headers: { authorization: `Bearer ${tokens.org}`, "content-type": "application/json" },
    body: JSON.stringify({ inputs: { topic: "queues" } }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { kickoff_id: string }).kickoff_id;
};
const status = async (id: string) =>
  (await (
    await fetch(`${dev.url}/crews/queued/status/${id}`, { headers: { authorization: `Bearer ${tokens.org}` } })
  ).json()) as { status: string; progress?: unknown; current_task?: string };

it("runs two kickoffs' tasks one process at a time; the waiting one is running with progress 0; both complete", async () => {
  const first = await kickoff();
  const second = await kickoff();
  let most = 0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      most = Math.max(most, (await runnersOf([first, second])).length);
      await new Promise((r) => setTimeout(r, 20));
    }
  })();

  // While the first execution's task runs, the second waits: running, at its first task, nothing completed.
  await waitFor(async () => (await runnersOf([first])).length === 1 || undefined);
  expect(await status(second)).toEqual({
    status: "running",
    state: "RUNNING",
    current_task: "step1",
    progress: { completed_tasks: 0, total_tasks: 2 },
  });

  const finals = await Promise.all(
    [first, second].map((id) =>
      waitFor(async () => {
        const s = await status(id);
        return s.status === "running" ? undefined : s;
      }, 40_000),
    ),
  );
  sampling = false;
  await sampler;
  expect(finals.map((f) => f.status)).toEqual(["completed", "completed"]);
  expect(most).toBe(1);
}, 60_000);

it("gives the slot back when a running or a waiting execution is stopped", async () => {
  const running = await kickoff();
  const waiting = await kickoff();
  await waitFor(async () => (await runnersOf([running])).length === 1 || undefined);
  for (const id of [waiting, running]) {
    const res = await fetch(`${dev.url}/crews/queued/stop/${id}`, {
      method: "POST",
      headers: { authorization: `Bearer ${tokens.org}` },
    });
    expect(res.status).toBe(200);
  }
  for (const id of [waiting, running]) {
    expect((await waitFor(async () => ((await status(id)).status === "running" ? undefined : status(id)))).status).toBe(
      "error",
    );
  }
  expect(await runnersOf([waiting])).toEqual([]);
  const next = await kickoff();
  const final = await waitFor(async () => {
    const s = await status(next);
    return s.status === "running" ? undefined : s;
  }, 20_000);
  expect(final.status).toBe("completed");
}, 60_000);
