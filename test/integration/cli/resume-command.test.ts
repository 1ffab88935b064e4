import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resumeResponse, statusResponse } from "../../../core/api-bodies.ts";
import type { RunningDev } from "../../../dev/start.ts";
import { startTestDev, tokens, waitFor } from "../../support/dev-server.ts";
import { cli, startCli } from "./support.ts";

// `kubecrew resume` (issue 32) against a real `kubecrew dev`: a run whose task waits for a person is answered from the
// command line — sent back with feedback, then approved — and `kubecrew status` says what waits.
const review = `apiVersion: kubecrew.io/v1alpha1
kind: Crew
metadata: { name: review }
spec:
  llm: { provider: mock, model: echo }
  agents: [{ name: writer, role: Writer, goal: Write }]
  tasks: [{ name: draft, agent: writer, description: Draft a note, expectedOutput: A note, humanInput: true }]
  runner: { retries: 0 }
`;

describe("kubecrew resume", { timeout: 60_000 }, () => {
  let dev: RunningDev;
  let env: Record<string, string>;
  beforeAll(async () => {
    dev = await startTestDev({ "review.yaml": review });
    env = { KUBECREW_URL: dev.url, KUBECREW_TOKEN: tokens.org };
  });
  afterAll(() => dev?.stop());

  const status = async (id: string) => {
    const res = await fetch(`${dev.url}/crews/review/status/${id}`, {
      headers: { authorization: `Bearer ${tokens.org}` },
    });
    return statusResponse.parse(await res.json());
  };
  const waitingAnswer = (id: string) =>
    waitFor(async () => {
      const s = await status(id);
      return s.status === "running" ? s.pending_human_input : undefined;
    });

  it("sends the waiting answer back with feedback, then approves the revision; a third answer is refused", async () => {
    const kickoff = await fetch(`${dev.url}/crews/review/kickoff`, {
      method: "POST",
      headers: { authorization: `Bearer ${tokens.org}`, "content-type": "application/json" },
      body: "{}",
    });
    const { kickoff_id: id } = (await kickoff.json()) as { kickoff_id: string };
    const first = await waitingAnswer(id);

    const shown = await cli(["status", id], env);
    expect(shown.stdout).toMatch(/^Waiting: for a person to review the answer of task draft:$/m);
    expect(shown.stdout).toContain(`kubecrew resume ${id} --approve`);

    const neither = await cli(["resume", id], env);
    expect(neither.code).toBe(1);
    expect(neither.stderr).toContain("--approve");

    const back = await cli(["resume", id, "--feedback", "Mention the tide tables."], env);
    expect(back.stderr).toBe("");
    expect(back).toMatchObject({ code: 0, stdout: expect.stringMatching(/\(retrying\)\n$/) });
    const second = await waitFor(async () => {
      const answer = await waitingAnswer(id);
      return answer.output !== first.output ? answer : undefined;
    });
    expect(second.output).toContain("Mention the tide tables.");

    const approved = await cli(["resume", id, "--task", "draft", "--approve", "--crew", "review", "-o", "json"], env);
    expect(approved.code).toBe(0);
    expect(resumeResponse.parse(JSON.parse(approved.stdout))).toMatchObject({ status: "completed" });
    await waitFor(async () => ((await status(id)).status === "completed" ? true : undefined));

    const again = await cli(["resume", id, "--task", "draft", "--approve"], env);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("Execution is not in pending human input state (400)");

    // The run's log says where it waited for a person.
    const logs = await cli(["logs", id], env);
    expect(logs.stdout).toMatch(/⏸ waited for a person since /);
    expect(logs.stdout).toMatch(/⏸ waited for a person \(revision 1\) since /);
  });

  it("run --watch says the run waits for a person and how to answer, and goes on once answered", async () => {
    const watching = startCli(["run", "review", "--watch"], env);
    const id = await waitFor(async () => /^Run (\S+) of review started$/m.exec(watching.stdout())?.[1]);
    await waitFor(async () => (watching.stdout().includes("waits for a person") ? true : undefined));
    expect(watching.stdout()).toContain(`⏸ draft waits for a person: kubecrew resume ${id} --approve`);
    expect((await cli(["resume", id, "--approve"], env)).code).toBe(0);
    const done = await watching.exited;
    expect(done.code).toBe(0);
    expect(done.stdout).toMatch(/✓ completed in /);
  });
});
