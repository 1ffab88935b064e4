import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { parse } from "yaml";
import { describe, expect, inject, it } from "vitest";
import { crewaiCreatedFlowProject, crewaiExampleFlow } from "../support/crewai-flow.ts";
import { crewSuite } from "./support/crew-suite.ts";
import { nodeBinary, repo, waitFor, type Loose } from "./support/fixture.ts";
import { flowManifest } from "./support/flow-manifests.ts";
import { installed } from "./support/installed.ts";
import { kubectl } from "./support/kubectl.ts";

/**
 * CrewAI's own flows on a real control plane, with no model (the mock provider): the example flow of the installed
 * crewai package (never a copy) and the flow the real CLI writes (`crewai create flow NAME --declarative`, imported by
 * `kubecrew import crewai` and applied with kubectl) run to their end; a human_feedback nobody answers is answered by
 * the mock after the controller's KUBECREW_MOCK_FEEDBACK_SECONDS, as in `kubecrew dev` (issue 33).
 */
const kubeconfig = inject("kubeconfig");
// The suite's own controller waits 3 s; the kind-installed chart's runs with the default, 30 s.
const MOCK_FEEDBACK_SECONDS = installed ? 30 : 3;
const mock = { provider: "mock", model: "mock" };

const suite = crewSuite(kubeconfig, {
  prefix: "flowcrewai",
  crews: () => [],
  controllerEnv: { KUBECREW_MOCK_FEEDBACK_SECONDS: String(MOCK_FEEDBACK_SECONDS) },
});

async function served(flow: string): Promise<void> {
  await waitFor(`${flow} served`, async () => (await suite.api.call(`/flows/${flow}/inputs`)).status === 200, 60_000);
}

async function kickoff(flow: string, inputs: Record<string, unknown>): Promise<string> {
  const res = await suite.api.call(`/flows/${flow}/kickoff`, { body: { inputs } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.kickoff_id as string;
}

async function status(flow: string, id: string): Promise<Loose> {
  const res = await suite.api.call(`/flows/${flow}/status/${id}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

async function finished(flow: string, id: string, timeoutMs = 180_000): Promise<Loose> {
  return waitFor(
    `${flow} run ${id} over`,
    async () => {
      const body = await status(flow, id);
      return body.status === "running" ? undefined : body;
    },
    timeoutMs,
    250,
  );
}

async function children(id: string): Promise<Loose[]> {
  const selector = `kubecrew.io/flow-execution=${id}`;
  return JSON.parse(
    await kubectl(kubeconfig, ["get", "crewexecutions", "-n", suite.namespace, "-l", selector, "-o", "json"]),
  ).items;
}

describe("CrewAI's flows on the cluster", () => {
  it("runs CrewAI's example flow: its crew's two tasks, the router's first outcome on the mock, the follow-up", async () => {
    await suite.applyCrew(flowManifest("research-review", parse(crewaiExampleFlow()), mock));
    await served("research-review");
    const id = await kickoff("research-review", { topic: "tide pools", audience: "marine biologists" });
    const final = await finished("research-review", id);
    expect(final.status, JSON.stringify(final)).toBe("completed");
    expect(final.result.tasks.map((t: Loose) => t.task_id)).toEqual([
      "research_brief",
      "route_followup",
      "write_followup",
    ]);
    expect(final.result.outcomes).toEqual([{ method: "route_followup", outcome: "followup" }]);
    expect(final.result.outputs.research_brief.tasks_output.map((t: Loose) => t.name)).toEqual([
      "research_task",
      "review_task",
    ]);
    // The crew ran as one child execution of two tasks; each agent method as one of its own.
    const runs = await children(id);
    expect(runs.map((c) => c.spec.crewRef.name).sort()).toEqual([
      "research-review-research-brief",
      "research-review-route-followup",
      "research-review-write-followup",
    ]);
    const crewRun = runs.find((c) => c.spec.crewRef.name === "research-review-research-brief");
    expect(crewRun.spec.inputs).toEqual({ topic: "tide pools", audience: "marine biologists" });
    expect(crewRun.status).toMatchObject({ phase: "Succeeded", progressText: "2/2" });
  });

  it("runs the flow the real CLI writes, as `kubecrew import crewai` prints it for kubectl", async () => {
    const project = crewaiCreatedFlowProject("news_flow");
    const imported = await promisify(execFile)(nodeBinary, [join(repo, "cli/main.ts"), "import", "crewai", project]);
    expect(imported.stderr).toBe("");
    await suite.applyCrew(imported.stdout);
    await served("news-flow");
    const final = await finished("news-flow", await kickoff("news-flow", {}), 60_000);
    // Its one method answers the state's default topic.
    expect(final).toMatchObject({ status: "completed", result: { output: "AI agents" } });
  });

  it("answers a human_feedback nobody answered with its first outcome once the mock's wait is over", async () => {
    const document = {
      schema: "crewai.flow/v1",
      name: "SignOffFlow",
      methods: {
        draft: {
          start: true,
          do: { call: "agent", with: { role: "Writer", goal: "Write", backstory: "Brief.", input: "A short note" } },
        },
        review: {
          listen: "draft",
          human_feedback: { message: "Send it?", emit: ["approved", "rejected"] },
          do: { call: "expression", expr: "outputs.draft.raw" },
        },
        send: { listen: "approved", do: { call: "expression", expr: "'sent'" } },
        hold: { listen: "rejected", do: { call: "expression", expr: "'held'" } },
      },
    };
    await suite.applyCrew(flowManifest("sign-off", document, mock));
    await served("sign-off");
    const id = await kickoff("sign-off", {});
    await waitFor(
      "sign-off waits for a person",
      async () => (await status("sign-off", id)).state === "PENDING_HUMAN_INPUT",
      120_000,
      100,
    );
    const waitingSince = Date.now();
    const final = await finished("sign-off", id, MOCK_FEEDBACK_SECONDS * 1000 + 60_000);
    // Nobody called /resume: the mock answered, not before its time.
    expect(Date.now() - waitingSince).toBeGreaterThanOrEqual((MOCK_FEEDBACK_SECONDS - 1) * 1000);
    expect(final.status, JSON.stringify(final)).toBe("completed");
    expect(final.result.outcomes).toEqual([{ method: "review", outcome: "approved" }]);
    expect(final.result.outputs.review).toMatchObject({ feedback: "", outcome: "approved" });
    expect(final.result.output).toBe("sent");
  });
});
