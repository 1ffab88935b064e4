import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemoryTokenStore } from "../../../api/auth/memory-token-store.ts";
import { silentLogger } from "../../../core/logger.ts";
import { devConfigSchema } from "../../../dev/config.ts";
import { startDev, type RunningDev } from "../../../dev/start.ts";
import { waitFor } from "../../support/dev-server.ts";

// Issue 33 item 4: with no model (`npm start` with no key: the mock provider, examples/ as the crews folder) a flow's
// human_feedback that nobody answers is answered by the mock with its first outcome, so examples/review-flow.yaml
// runs to its end; a person's POST /resume before then still chooses. Before, the run waited for /resume for ever.

const token = "kco_test-mock-feedback-token-00000";
const auth = { authorization: `Bearer ${token}`, "content-type": "application/json" };
// Answers read field by field, as a client would.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Body = Record<string, any>;

async function startAsNpmStart(mockFeedbackSeconds: string): Promise<RunningDev> {
  const tokens = new MemoryTokenStore();
  tokens.add(token, { kind: "org", crews: "*", subject: "org" });
  // What `npm start` reads with no variable set, but the port and the wait.
  const config = devConfigSchema.parse({ PORT: "0", KUBECREW_MOCK_FEEDBACK_SECONDS: mockFeedbackSeconds });
  expect(config.llm.provider).toBeUndefined();
  return startDev(config, silentLogger(), { tokens });
}

describe("the mock provider answers a flow's human_feedback", () => {
  let dev: RunningDev;
  const call = async (path: string, body?: unknown) => {
    const res = await fetch(`${dev.url}${path}`, {
      method: body === undefined ? "GET" : "POST",
      headers: auth,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return (await res.json()) as Body;
  };
  beforeAll(async () => {
    dev = await startAsNpmStart("2");
  }, 60_000);
  afterAll(() => dev?.stop());

  it("runs examples/review-flow.yaml to its end with its first outcome when nobody answers", async () => {
    const { kickoff_id: id } = await call("/flows/article-review-flow/kickoff", { inputs: { topic: "tide pools" } });
    const done = await waitFor(async () => {
      const s = await call(`/flows/article-review-flow/status/${id}`);
      return s.status === "running" ? undefined : s;
    }, 180_000);
    expect(done.status).toBe("completed");
    expect(done.result.outcomes).toEqual([
      { method: "check_length", outcome: "long_enough" },
      { method: "review", outcome: "approved" },
    ]);
    expect(done.result.outputs.review).toMatchObject({ feedback: "", outcome: "approved" });
    expect(done.result.output).toMatch(/^published: \[mock llm\]/);
    // It did wait for a person first: the request is in the event stream, before review's answer.
    const events = await (
      await fetch(`${dev.url}/flows/article-review-flow/status/${id}/events`, { headers: auth })
    ).text();
    const names = [...events.matchAll(/event: (\w+)\ndata: (.*)/g)].map((m) => `${m[1]} ${JSON.parse(m[2]!).method}`);
    expect(names.slice(names.indexOf("human_feedback_requested review"))).toEqual([
      "human_feedback_requested review",
      "method_completed review",
      "method_started publish",
      "method_completed publish",
      "flow_finished undefined",
    ]);
  }, 200_000);

  it("takes a person's /resume that comes first", async () => {
    await dev.stop();
    dev = await startAsNpmStart("120");
    const { kickoff_id: id } = await call("/flows/article-review-flow/kickoff", { inputs: { topic: "kelp" } });
    await waitFor(async () => {
      const s = await call(`/flows/article-review-flow/status/${id}`);
      return s.state === "PENDING_HUMAN_INPUT" ? s : undefined;
    }, 150_000);
    const resumed = await call("/flows/article-review-flow/resume", { execution_id: id, human_feedback: "rejected" });
    expect(resumed).toMatchObject({ status: "resumed", outcome: "rejected" });
    const done = await waitFor(async () => {
      const s = await call(`/flows/article-review-flow/status/${id}`);
      return s.status === "running" ? undefined : s;
    }, 30_000);
    expect(done.result.output).toBe("discarded: rejected");
  }, 200_000);
});
