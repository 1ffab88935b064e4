import { expect } from "vitest";
import { startWebhookReceiver } from "../e2e/support/webhook-receiver.ts";
import { framesUntil } from "./event-frames.ts";
import { waitFor } from "./wait-for.ts";

/**
 * Issue 32's webhook URLs on `POST /resume`, the same in `kubecrew dev` and on a cluster, against the HITL crew of
 * amp-hitl.ts at `base` (`…/crews/<crew>`): kicked off with receiver A's task, step and crew URLs; while the answer
 * waits the event stream sends `human_input_requested`; a URL the outbound policy refuses is a 400 naming the field;
 * sent back with receiver B's URLs, then approved with none (the execution's, now B's, stay): everything after the
 * resume reaches B, nothing more reaches A. The receivers listen on `host` (where the controller reaches them).
 */
export async function expectWebhooksMovedOnResume(
  base: string,
  token: string,
  host = "127.0.0.1",
  timeoutMs = 20_000,
): Promise<void> {
  const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${base}${path}`, { method: "POST", headers, body: JSON.stringify(body) });
    return { code: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const pending = async (id: string) => {
    const res = await fetch(`${base}/status/${id}`, { headers });
    const body = (await res.json()) as {
      status: string;
      pending_human_input?: { output: string; requested_at: string };
    };
    return body;
  };
  const [a, b] = [await startWebhookReceiver(host), await startWebhookReceiver(host)];
  const urls = (r: { url: string }) => ({
    taskWebhookUrl: `${r.url}/task`,
    stepWebhookUrl: `${r.url}/step`,
    crewWebhookUrl: `${r.url}/crew`,
  });
  try {
    const kicked = await post("/kickoff", { inputs: { topic: "tide pools" }, ...urls(a) });
    expect(kicked.code).toBe(200);
    const id = kicked.body.kickoff_id as string;

    // While it waits, the event stream names the task and the answer that waits, after the answer's steps.
    const frames = await framesUntil(`${base}/status/${id}/events`, token, (f) => f.event === "human_input_requested");
    const waiting = (await pending(id)).pending_human_input!;
    expect(frames.at(-1)!.data).toMatchObject({
      kickoff_id: id,
      task_id: "draft",
      output: waiting.output,
      revision: 0,
      requested_at: waiting.requested_at,
    });
    const steps = frames.filter((f) => f.event === "step" && f.data.task_id === "draft").length;
    expect(steps).toBeGreaterThan(0);
    // A has the waiting answer's task webhook and every step before the wait; nothing more is due to it.
    const atA = await waitFor(async () => {
      const task = a.hooks.filter((h) => h.path === "/task");
      const step = a.hooks.filter((h) => h.path === "/step");
      return task.length === 1 && step.length === steps ? a.hooks.length : undefined;
    }, timeoutMs);
    expect(JSON.parse(a.hooks.find((h) => h.path === "/task")!.body)).toMatchObject({
      task_id: "draft",
      output: waiting.output,
    });

    // A URL the outbound policy refuses: a 400 naming the field; nothing recorded, the answer still waits.
    const back = { execution_id: id, task_id: "draft", human_feedback: "Shorter.", is_approve: false, ...urls(b) };
    const refused = await post("/resume", { ...back, stepWebhookUrl: "http://169.254.169.254/latest/meta-data" });
    expect(refused).toEqual({
      code: 400,
      body: {
        error: "Bad Request",
        message: expect.stringMatching(/^Invalid resume request: stepWebhookUrl: /),
        details: [{ field: "stepWebhookUrl", message: expect.any(String) }],
      },
    });
    expect((await pending(id)).pending_human_input).toEqual(waiting);

    // Sent back with B's URLs; the revision approved with none given.
    expect((await post("/resume", back)).body.status).toBe("retrying");
    const second = await waitFor(async () => {
      const p = (await pending(id)).pending_human_input;
      return p && p.output !== waiting.output ? p : undefined;
    }, timeoutMs * 2);
    const approve = { execution_id: id, task_id: "draft", human_feedback: "Good.", is_approve: true };
    expect((await post("/resume", approve)).body.status).toBe("resumed");
    await waitFor(async () => (b.hooks.some((h) => h.path === "/crew") ? true : undefined), timeoutMs * 2);
    // The controller sends the crew webhook after it wrote the finished status; on a cluster the API reads that from its
    // watch, which may be a moment behind under load, so the status is read until it says so.
    await waitFor(async () => ((await pending(id)).status === "completed" ? true : undefined), timeoutMs);

    // Everything after the resume went to B: the revision's and the next task's task webhooks, their steps, both
    // decisions as steps, the crew webhook. A got nothing more.
    expect(a.hooks).toHaveLength(atA);
    const atB = (path: string) => b.hooks.filter((h) => h.path === path).map((h) => JSON.parse(h.body));
    expect(atB("/task").map((h) => [h.task_id, h.output])).toEqual([
      ["draft", second.output],
      ["publish", expect.stringContaining(second.output.split("\n")[0]!)],
    ]);
    expect(atB("/crew")).toEqual([expect.objectContaining({ kickoff_id: id })]);
    const stepsAtB = atB("/step");
    expect(stepsAtB.filter((h) => h.step.kind === "decision").map((h) => h.step.decision)).toEqual([
      "sent_back",
      "approved",
    ]);
    expect(new Set(stepsAtB.filter((h) => h.step.kind !== "decision").map((h) => h.task_id))).toEqual(
      new Set(["draft", "publish"]),
    );
  } finally {
    a.close();
    b.close();
  }
}
