import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { crewaiPrompts, crewaiPython, fillPrompt } from "../support/crewai.ts";
import { answer, startLlmFixture, type LlmFixture } from "../support/llm-fixture.ts";
import { kubectl } from "./support/kubectl.ts";
import {
  applyCrew,
  crewNamespace,
  finalStatus,
  jobsOf,
  kickoff,
  releaseCrewNamespace,
  resultsOf,
  startClusterApi,
  startControllerProcess,
  status,
  waitFor,
  type ClusterApi,
  type ControllerProcess,
  type Loose,
} from "./support/fixture.ts";
import { hostForPods, installedSystem } from "./support/installed.ts";

/**
 * A two-task crew on the crewai runtime through /kickoff and /status: each task a Job whose runner hands the task to
 * the real CrewAI (the local node gives every container the crewai runtime's Python, as the crewai runner image does;
 * on kind the task pods run the crewai runner image), each task's result a CrewTaskResult. A humanInput task's wait,
 * its revision in a Job of its own (CrewAI given the earlier answer and the feedback), its approval.
 */
const kubeconfig = inject("kubeconfig");
const CREWAI_IMAGE = "kubecrew-crewai:e2e";
let namespace: string;
let controller: ControllerProcess | undefined;
let api: ClusterApi;
let llm: LlmFixture;

beforeAll(async () => {
  llm = await startLlmFixture(hostForPods());
  namespace = await crewNamespace(kubeconfig, "crewai");
  await applyCrew(
    kubeconfig,
    namespace,
    `apiVersion: kubecrew.io/v1alpha1
kind: Crew
metadata: { name: crewai-pair }
spec:
  runtime: crewai
  inputs: [{ name: topic }]
  llm: { provider: openai-compatible, model: fixture-model, baseURL: ${llm.baseURL} }
  agents:
    - { name: analyst, role: "{topic} Analyst", goal: "Understand {topic}", backstory: "Careful." }
  tasks:
    - { name: research, agent: analyst, description: "Research {topic}", expectedOutput: "Facts" }
    - { name: summary, agent: analyst, description: "Summarise the research", expectedOutput: "A paragraph" }
  runner: { retries: 0, taskTimeoutSeconds: 300 }
`,
  );
  await applyCrew(
    kubeconfig,
    namespace,
    `apiVersion: kubecrew.io/v1alpha1
kind: Crew
metadata: { name: crewai-review }
spec:
  runtime: crewai
  inputs: [{ name: topic }]
  llm: { provider: openai-compatible, model: fixture-model, baseURL: ${llm.baseURL} }
  agents:
    - { name: writer, role: "{topic} Writer", goal: "Write about {topic}", backstory: "Writes well." }
  tasks:
    - { name: draft, agent: writer, description: "Draft a note on {topic}", expectedOutput: "A note", humanInput: true }
  runner: { retries: 0, taskTimeoutSeconds: 300 }
`,
  );
  if (!installedSystem) {
    controller = await startControllerProcess(kubeconfig, namespace, {
      env: { KUBECREW_CREWAI_RUNNER_IMAGE: CREWAI_IMAGE },
    });
  }
  api = await startClusterApi(kubeconfig, namespace);
});

afterAll(async () => {
  await api?.stop();
  await controller?.kill("SIGTERM");
  await llm?.stop();
  if (installedSystem) {
    for (const crew of ["crewai-pair", "crewai-review"])
      await kubectl(kubeconfig, ["delete", "crew", crew, "-n", namespace, "--ignore-not-found"]);
  }
  if (namespace) await releaseCrewNamespace(kubeconfig, namespace);
});

describe("the crewai runtime on the cluster", { timeout: 600_000 }, () => {
  it("runs each task with CrewAI in its own Job and reports each result as a CrewTaskResult", async () => {
    llm.enqueue(answer("Tides follow the moon."), answer("In short: the moon."));
    const id = await kickoff(api, "crewai-pair", { inputs: { topic: "tides" } });
    const final = await finalStatus(api, "crewai-pair", id, 480_000);
    expect(final).toMatchObject({ status: "completed", result: { output: "In short: the moon." } });
    expect(final.result.tasks.map((t: { task_id: string; output: string }) => [t.task_id, t.output])).toEqual([
      ["research", "Tides follow the moon."],
      ["summary", "In short: the moon."],
    ]);
    const results = (await resultsOf(kubeconfig, namespace, id))
      .filter((r) => r.spec.output !== undefined)
      .sort((a, b) => a.spec.taskIndex - b.spec.taskIndex);
    expect(results.map((r) => [r.spec.taskName, r.spec.output, r.spec.stepCount])).toEqual([
      ["research", "Tides follow the moon.", 1],
      ["summary", "In short: the moon.", 1],
    ]);
    // CrewAI's own requests: its system prompt (read from the installed package), the first output as context.
    const messages = llm.requests.map((r) => r.body.messages as { role: string; content: string }[]);
    const slices = crewaiPrompts(crewaiPython()).slices!;
    expect(messages[0]![0]!.content).toBe(
      fillPrompt(slices.role_playing!, { role: "tides Analyst", backstory: "Careful.", goal: "Understand tides" }),
    );
    expect(messages[1]![1]!.content).toContain(
      fillPrompt(slices.task_with_context!, { task: "", context: "Tides follow the moon." }).trim(),
    );
    const job = JSON.parse(await kubectl(kubeconfig, ["get", "job", `${id}-0`, "-n", namespace, "-o", "json"]));
    const image = job.spec.template.spec.containers[0].image as string;
    if (installedSystem) expect(image).toMatch(/-crewai:/);
    else expect(image).toBe(CREWAI_IMAGE);
  });

  it("a humanInput task waits with no pod held; sent back, a revision Job gives CrewAI its answer and the feedback", async () => {
    const from = llm.requests.length;
    llm.enqueue(answer("A first draft about tides."), answer("Tides: short."));
    const id = await kickoff(api, "crewai-review", { inputs: { topic: "tides" } });
    const pending = (output?: string) =>
      waitFor(
        `execution ${id} waiting`,
        async () => {
          const p = (await status(api, "crewai-review", id)).pending_human_input as Loose | undefined;
          return p && p.output !== output ? p : undefined;
        },
        480_000,
        500,
      );
    expect(await pending()).toMatchObject({ task_id: "draft", output: "A first draft about tides." });
    await waitFor(
      "the task's Job complete, no pod left running",
      async () =>
        (await jobsOf(kubeconfig, namespace, id)).every((j) => j.status?.succeeded === 1 && !j.status?.active),
      60_000,
    );
    const resume = (approve: boolean, feedback: string) =>
      api.call("/crews/crewai-review/resume", {
        body: { execution_id: id, task_id: "draft", human_feedback: feedback, is_approve: approve },
      });
    expect((await resume(false, "Shorter.")).body).toMatchObject({ status: "retrying" });
    expect(await pending("A first draft about tides.")).toMatchObject({ output: "Tides: short." });
    // The revision ran in a Job of its own; CrewAI was given the answer the person saw, then its feedback message.
    const jobs = (await jobsOf(kubeconfig, namespace, id)).map((j) => j.metadata.name).sort();
    expect(jobs).toEqual([`${id}-0`, `${id}-0-r1`]);
    const messages = llm.requests.at(-1)!.body.messages as { role: string; content: string }[];
    const slices = crewaiPrompts(crewaiPython()).slices!;
    expect(messages.slice(-2)).toEqual([
      { role: "assistant", content: "A first draft about tides." },
      { role: "user", content: fillPrompt(slices.feedback_instructions!, { feedback: "Shorter." }) },
    ]);
    expect((await resume(true, "")).body).toMatchObject({ status: "completed" });
    const final = await finalStatus(api, "crewai-review", id, 120_000);
    expect(final).toMatchObject({ status: "completed", result: { output: "Tides: short." } });
    expect(llm.requests.length - from).toBe(2);
  });
});
