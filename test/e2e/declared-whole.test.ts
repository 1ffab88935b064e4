import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { projectJobName } from "../../kube/task-names.ts";
import { crewaiPython } from "../support/crewai.ts";
import { answer, startLlmFixture, toolCalls, type LlmFixture, type RecordedRequest } from "../support/llm-fixture.ts";
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
} from "./support/fixture.ts";
import { hostForPods, installedSystem } from "./support/installed.ts";

// A declared hierarchical crew on the crewai runtime (no runner.crew) on the cluster: one Job <execution>-p, CrewAI's
// manager delegating to both agents, each task's result as it completes; a stop ends the one Job.
const run = promisify(execFile);
const kubeconfig = inject("kubeconfig");
const CREW = "managed";
let namespace: string;
let controller: ControllerProcess | undefined;
let api: ClusterApi;
let llm: LlmFixture;
let delegate: string;

beforeAll(async () => {
  const python = crewaiPython();
  llm = await startLlmFixture(hostForPods());
  namespace = await crewNamespace(kubeconfig, "declared-whole");
  const code = [
    "from crewai import Agent, LLM",
    "from crewai.tools.agent_tools.agent_tools import AgentTools",
    "from crewai.utilities.string_utils import sanitize_tool_name",
    "a = Agent(role='R', goal='g', backstory='b', llm=LLM(model='openai/x', base_url='http://127.0.0.1:9', api_key='k'))",
    "print(sanitize_tool_name(AgentTools(agents=[a]).tools()[0].name))",
  ].join("\n");
  delegate = (
    await run(python, ["-c", code], {
      env: { ...process.env, CREWAI_DISABLE_TELEMETRY: "true", OTEL_SDK_DISABLED: "true" },
    })
  ).stdout.trim();
  await applyCrew(
    kubeconfig,
    namespace,
    `apiVersion: kubecrew.io/v1alpha1
kind: Crew
metadata: { name: ${CREW} }
spec:
  runtime: crewai
  process: hierarchical
  llm: { provider: openai-compatible, model: gpt-4o-mini, baseURL: ${llm.baseURL} }
  managerLlm: { provider: openai-compatible, model: gpt-4o, baseURL: ${llm.baseURL} }
  inputs: [{ name: topic }]
  runner: { retries: 0, executionTimeoutSeconds: 600 }
  agents:
    - { name: researcher, role: Researcher, goal: "Find facts about {topic}" }
    - { name: writer, role: Writer, goal: "Write about {topic}" }
  tasks:
    - { name: article, description: "Write an article about {topic}", expectedOutput: "An article" }
    - { name: title, agent: writer, description: "Title it", expectedOutput: "A title" }
`,
  );
  if (!installedSystem) controller = await startControllerProcess(kubeconfig, namespace);
  api = await startClusterApi(kubeconfig, namespace);
}, 900_000);

afterAll(async () => {
  await api?.stop();
  await controller?.kill("SIGTERM");
  await llm?.stop();
  if (namespace) await releaseCrewNamespace(kubeconfig, namespace);
});

const text = (r: RecordedRequest) => JSON.stringify(r.body.messages);
type Result = { spec: { taskName: string; output?: string; error?: string } };

describe("a declared hierarchical crewai crew on the cluster", { timeout: 900_000 }, () => {
  it("runs in one Job: the manager delegates to both agents, each task's result arrives", async () => {
    const from = llm.requests.length;
    llm.enqueue(
      toolCalls({ name: delegate, input: { task: "Find two facts", context: "An article", coworker: "Researcher" } }),
      answer("Tides follow the moon."),
      toolCalls({
        name: delegate,
        input: { task: "Write it up", context: "Tides follow the moon.", coworker: "Writer" },
      }),
      answer("A draft on tides."),
      answer("The article on tides.", undefined, 6000),
      answer("Tides", undefined, 6000),
    );
    const id = await kickoff(api, CREW, { inputs: { topic: "tides" } });
    const midway = await waitFor(
      "the article's result with the title running",
      async () => {
        const body = await status(api, CREW, id);
        return body.status !== "running" || body.progress?.completed_tasks === 1 ? body : undefined;
      },
      480_000,
      250,
    );
    expect(midway).toMatchObject({ status: "running", current_task: "title" });
    const final = await finalStatus(api, CREW, id, 240_000);
    expect(final.result.tasks.map((t: { task_id: string; output: string }) => [t.task_id, t.output])).toEqual([
      ["article", "The article on tides."],
      ["title", "Tides"],
    ]);
    const jobs = await jobsOf(kubeconfig, namespace, id);
    expect(jobs.map((j) => j.metadata.name)).toEqual([projectJobName(id)]);
    const requests = llm.requests.slice(from);
    expect(requests).toHaveLength(6);
    expect(text(requests[1]!)).toContain("Find two facts");
    expect(text(requests[3]!)).toContain("Write it up");
  });

  it("a stop ends the one Job; the finished task keeps its result", async () => {
    const from = llm.requests.length;
    llm.enqueue(answer("The article."), answer("never delivered", undefined, 300_000));
    const id = await kickoff(api, CREW, { inputs: { topic: "tides" } });
    await waitFor("the title's model call in flight", async () => llm.requests.length - from >= 2, 480_000, 250);
    const stop = await api.call(`/crews/${CREW}/stop/${id}`, { method: "POST" });
    expect(stop.status).toBe(200);
    const final = await finalStatus(api, CREW, id, 60_000);
    expect(final).toMatchObject({ status: "error", error: "Execution stopped" });
    const pods = async () =>
      (
        await kubectl(kubeconfig, ["get", "pods", "-n", namespace, "-l", `kubecrew.io/execution=${id}`, "-o", "name"])
      ).trim();
    await waitFor("its pod gone", async () => (await pods()) === "", 60_000, 250);
    const results = (await resultsOf(kubeconfig, namespace, id)) as Result[];
    expect(results.filter((r) => r.spec.output !== undefined).map((r) => r.spec.taskName)).toEqual(["article"]);
  });
});
