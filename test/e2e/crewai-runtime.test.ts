import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { crewaiPrompts, crewaiPython, fillPrompt } from "../support/crewai.ts";
import { answer, startLlmFixture, type LlmFixture } from "../support/llm-fixture.ts";
import { kubectl } from "./support/kubectl.ts";
import {
  applyCrew,
  crewNamespace,
  finalStatus,
  kickoff,
  releaseCrewNamespace,
  resultsOf,
  startClusterApi,
  startControllerProcess,
  type ClusterApi,
  type ControllerProcess,
} from "./support/fixture.ts";
import { hostForPods, installedSystem } from "./support/installed.ts";

/**
 * A two-task crew on the crewai runtime through /kickoff and /status: each task a Job whose runner hands the task to
 * the real CrewAI (the local node gives every container the crewai runtime's Python, as the crewai runner image does;
 * on kind the task pods run the crewai runner image), each task's result a CrewTaskResult.
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
  if (installedSystem)
    await kubectl(kubeconfig, ["delete", "crew", "crewai-pair", "-n", namespace, "--ignore-not-found"]);
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
});
