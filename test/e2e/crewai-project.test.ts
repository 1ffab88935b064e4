import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { localImageFile } from "../../hack/local-node/local-images.ts";
import { projectJobName } from "../../kube/task-names.ts";
import { crewaiPython } from "../support/crewai.ts";
import { createCrewaiProject, giveToolToResearcher, type CrewaiProject } from "../support/crewai-project.ts";
import { answer, startLlmFixture, toolCalls, type LlmFixture, type RecordedRequest } from "../support/llm-fixture.ts";
import { kubectl } from "./support/kubectl.ts";
import {
  applyCrew,
  crewNamespace,
  finalStatus,
  jobsOf,
  kickoff,
  releaseCrewNamespace,
  repo,
  resultsOf,
  startClusterApi,
  startControllerProcess,
  status,
  waitFor,
  type ClusterApi,
  type ControllerProcess,
} from "./support/fixture.ts";
import { hostForPods, installedSystem } from "./support/installed.ts";

/**
 * A user's whole CrewAI project (spec.runner.crew) from its own image on a cluster, through /kickoff and /status: the
 * project the real CLI makes (`crewai create crew tidepool --classic --skip-provider`, its custom tool given to its
 * researcher), in an image built with the three-line Dockerfile of examples/crewai-project on the crewai runner image.
 * On kind (the installed chart) the image is built and loaded into the cluster and the Job runs it as a real
 * container; the local node has no images (it runs each container's command on this machine), so the image is
 * declared to it with what its Dockerfile adds: the project on PYTHONPATH (hack/local-node/local-images.ts).
 */
const run = promisify(execFile);
const kubeconfig = inject("kubeconfig");
const USER_IMAGE = "tidepool:e2e";
const CREW = "tidepool";
let namespace: string;
let controller: ControllerProcess | undefined;
let api: ClusterApi;
let llm: LlmFixture;
let dir: string;
let tool: string;

/** The documented Dockerfile, on the crewai runner image this run built; built, and loaded into the kind cluster. */
async function buildProjectImage(project: CrewaiProject): Promise<void> {
  const documented = readFileSync(join(repo, "examples/crewai-project/Dockerfile"), "utf8");
  expect(documented.trim().split("\n")).toHaveLength(3);
  // hack/kind-e2e.sh names the crewai runner image after the kubecrew image it hands the suite.
  const runnerImage = process.env.KUBECREW_RUNNER_IMAGE ?? "kubecrew:e2e";
  const crewaiImage = `${runnerImage.replace(/:[^:/]*$/, "")}-crewai:${runnerImage.split(":").at(-1)}`;
  writeFileSync(join(project.root, "Dockerfile"), documented.replace(/^FROM \S+/m, `FROM ${crewaiImage}`));
  await run("bash", [join(repo, "hack/docker.sh"), "build", "--tag", USER_IMAGE, project.root], {
    maxBuffer: 64 * 1024 * 1024,
  });
  const context = (await kubectl(kubeconfig, ["config", "current-context"])).trim();
  const tools = (await run("bash", [join(repo, "hack/tools.sh"), "path"])).stdout.trim();
  await run(join(tools, "kind"), ["load", "docker-image", USER_IMAGE, "--name", context.replace(/^kind-/, "")]);
}

beforeAll(async () => {
  const python = crewaiPython();
  llm = await startLlmFixture(hostForPods());
  namespace = await crewNamespace(kubeconfig, "crewai-project");
  dir = mkdtempSync(join(tmpdir(), "kubecrew-project-e2e-"));
  const project = createCrewaiProject(python, dir, "tidepool");
  giveToolToResearcher(project, "tidepool");
  // The tool's name as CrewAI's native tool calling sends it, from the package itself.
  const named = await run(
    python,
    [
      "-c",
      "from tidepool.tools.custom_tool import MyCustomTool\nfrom crewai.utilities.agent_utils import sanitize_tool_name\nprint(sanitize_tool_name(MyCustomTool().name))",
    ],
    { env: { ...process.env, PYTHONPATH: project.src, CREWAI_DISABLE_TELEMETRY: "true", OTEL_SDK_DISABLED: "true" } },
  );
  tool = named.stdout.trim();
  if (installedSystem) await buildProjectImage(project);
  else {
    const declared = localImageFile(join(dirname(kubeconfig), "node"), USER_IMAGE);
    mkdirSync(dirname(declared), { recursive: true });
    writeFileSync(declared, JSON.stringify({ env: { PYTHONPATH: project.src } }));
  }
  await applyCrew(
    kubeconfig,
    namespace,
    `apiVersion: kubecrew.io/v1alpha1
kind: Crew
metadata: { name: ${CREW} }
spec:
  runtime: crewai
  llm: { provider: openai-compatible, model: gpt-4o-mini, baseURL: ${llm.baseURL} }
  inputs: [{ name: topic }, { name: current_year }]
  runner: { image: "${USER_IMAGE}", crew: "tidepool.crew:Tidepool", retries: 0, executionTimeoutSeconds: 600 }
  agents:
    - { name: researcher, role: "{topic} Senior Data Researcher", goal: "Uncover {topic}" }
    - { name: reporting_analyst, role: "{topic} Reporting Analyst", goal: "Report on {topic}" }
  tasks:
    - { name: research_task, agent: researcher, description: "Research {topic} in {current_year}", expectedOutput: "Bullets" }
    - { name: reporting_task, agent: reporting_analyst, description: "Report", expectedOutput: "A report" }
`,
  );
  if (!installedSystem) controller = await startControllerProcess(kubeconfig, namespace);
  api = await startClusterApi(kubeconfig, namespace);
}, 900_000);

afterAll(async () => {
  await api?.stop();
  await controller?.kill("SIGTERM");
  await llm?.stop();
  if (installedSystem) await kubectl(kubeconfig, ["delete", "crew", CREW, "-n", namespace, "--ignore-not-found"]);
  if (namespace) await releaseCrewNamespace(kubeconfig, namespace);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const inputs = { inputs: { topic: "tides", current_year: "2026" } };
const text = (r: RecordedRequest) => JSON.stringify(r.body.messages);
type Result = { spec: { taskName: string; output?: string; error?: string; stepCount?: number } };

describe("a whole CrewAI project from the user's image on the cluster", { timeout: 900_000 }, () => {
  it("runs it in one Job: each task's steps and result arrive as CrewAI completes them, /status completes", async () => {
    const from = llm.requests.length;
    llm.enqueue(
      toolCalls({ name: tool, input: { argument: "tides" } }),
      // Each task's last answer takes a while: what was reported before it is looked at meanwhile.
      answer("Tides follow the moon.", undefined, 8000),
      answer("A report on tides.", undefined, 8000),
    );
    const id = await kickoff(api, CREW, inputs);
    // The research's first two steps (its tool call, the tool's answer) while it still waits for its answer.
    const live = await waitFor(
      "the research's steps while it runs",
      async () => {
        const results = (await resultsOf(kubeconfig, namespace, id)) as Result[];
        // Seen too late: the research already has its result.
        if (results.some((r) => r.spec.output !== undefined)) return { late: true };
        return results.find((r) => r.spec.taskName === "research_task" && (r.spec.stepCount ?? 0) >= 2);
      },
      480_000,
      250,
    );
    expect(live).toMatchObject({ spec: { taskName: "research_task", stepCount: 2 } });
    // The research's result while the report is still being written.
    const midway = await waitFor(
      "the research's result with the report running",
      async () => {
        const body = await status(api, CREW, id);
        return body.status !== "running" || body.progress?.completed_tasks === 1 ? body : undefined;
      },
      120_000,
      250,
    );
    expect(midway).toMatchObject({
      status: "running",
      current_task: "reporting_task",
      progress: { completed_tasks: 1, total_tasks: 2 },
    });
    const done = (await resultsOf(kubeconfig, namespace, id)) as Result[];
    expect(done.filter((r) => r.spec.output !== undefined).map((r) => [r.spec.taskName, r.spec.output])).toEqual([
      ["research_task", "Tides follow the moon."],
    ]);

    const final = await finalStatus(api, CREW, id, 240_000);
    expect(final).toMatchObject({ status: "completed", result: { output: "A report on tides." } });
    expect(final.result.tasks.map((t: { task_id: string; output: string }) => [t.task_id, t.output])).toEqual([
      ["research_task", "Tides follow the moon."],
      ["reporting_task", "A report on tides."],
    ]);
    // One Job for the whole project, <execution>-p (whose pod the results policy lets write every task's result), in
    // the user's image.
    const jobs = await jobsOf(kubeconfig, namespace, id);
    expect(jobs.map((j) => j.metadata.name)).toEqual([projectJobName(id)]);
    expect(jobs[0].spec.template.spec.containers[0].image).toBe(USER_IMAGE);
    // CrewAI's own requests: the project's YAML role with the inputs, its tool's answer, the first output as context.
    const requests = llm.requests.slice(from);
    expect(requests).toHaveLength(3);
    expect(text(requests[0]!)).toContain("tides Senior Data Researcher");
    expect(text(requests[1]!)).toContain("TOOL SAYS TIDES");
    expect(text(requests[2]!)).toContain("Tides follow the moon.");
    expect(requests[0]!.headers["user-agent"]).toMatch(/^OpenAI\/Python /);
  });

  it("a stop mid-project ends the run at once with the stopped shape; the finished task keeps its result", async () => {
    const from = llm.requests.length;
    llm.enqueue(answer("Tides follow the moon."), answer("never delivered", undefined, 300_000));
    const id = await kickoff(api, CREW, inputs);
    await waitFor("the report's model call in flight", async () => llm.requests.length - from >= 2, 480_000, 250);
    const stop = await api.call(`/crews/${CREW}/stop/${id}`, { method: "POST" });
    expect(stop.status).toBe(200);
    const stoppedAt = Date.now();
    const final = await finalStatus(api, CREW, id, 60_000);
    expect(final).toMatchObject({ status: "error", state: "FAILED", error: "Execution stopped" });
    // The pod ends by itself on SIGTERM, well within the 30 s a pod is given before it is killed.
    const pods = async () =>
      (
        await kubectl(kubeconfig, ["get", "pods", "-n", namespace, "-l", `kubecrew.io/execution=${id}`, "-o", "name"])
      ).trim();
    await waitFor("its pod gone", async () => (await pods()) === "", 60_000, 250);
    expect(Date.now() - stoppedAt).toBeLessThan(20_000);
    // The research's result stands; the report, running when stopped, is the one the runner says was interrupted.
    const results = await waitFor("the runner's last result", async () => {
      const all = (await resultsOf(kubeconfig, namespace, id)) as Result[];
      return all.some((r) => r.spec.error !== undefined) ? all : undefined;
    });
    expect(results.filter((r) => r.spec.output !== undefined).map((r) => r.spec.taskName)).toEqual(["research_task"]);
    expect(results.filter((r) => r.spec.error !== undefined).map((r) => [r.spec.taskName, r.spec.error])).toEqual([
      ["reporting_task", "Task interrupted by SIGTERM"],
    ]);
  });
});
