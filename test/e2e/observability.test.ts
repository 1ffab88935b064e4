import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startTracing, type Tracing } from "../../platform/telemetry/tracing.ts";
import { answer, startLlmFixture, toolCalls, type LlmFixture } from "../support/llm-fixture.ts";
import { startFixtureMcpServer, type FixtureMcpServer } from "../support/mcp-servers.ts";
import { startCollector, type RunningCollector, type StoredSpan } from "../support/otel-collector.ts";
import { applyCrew, finalStatus, kickoff, waitFor, type ControllerProcess } from "./support/fixture.ts";
import { hostForPods, installed } from "./support/installed.ts";
import { kubectl } from "./support/kubectl.ts";
import { startOwnSystem, type OwnSystem } from "./support/own-system.ts";

/**
 * On a real control plane, traced into the real OpenTelemetry Collector: the kickoff's trace of a three-task crew with
 * an MCP tool reaches the controller (its Job-start spans) and the task pods (their runner's spans under it, naming the
 * pod; the tool call under its task), with no secret of the crew's (its LLM key, its MCP server's bearer token, both
 * from Secrets) in any span; kubecrew_llm_tokens_total on the controller's metrics adds up the tokens the LLM fixture
 * reported for a batch of executions; a finished execution's usage and cost (the controller's price table) are on its
 * CrewExecution status and in kubecrew_llm_cost_usd_total. The API runs in this process (its tracer is this
 * process's); the controller and the pods export on their own.
 */
const kubeconfig = inject("kubeconfig");
/** The controller's price table: US dollars per million tokens of the fixture's model. */
const PRICES = { "fixture-model": { input: 2, output: 10 } };
/** The traced crew's secrets, each in a Secret the task pods get through secretKeyRef. */
const API_KEY = "sk-e2e-trace-secret-7d21";
const MCP_BEARER = "mcp-e2e-trace-bearer-40ac";
let collector: RunningCollector;
let llm: LlmFixture;
let mcp: FixtureMcpServer;
let tracing: Tracing;
let system: OwnSystem;
let controller: ControllerProcess;

const crew = () => `apiVersion: kubecrew.io/v1alpha1
kind: Crew
metadata: { name: counted }
spec:
  inputs: [{ name: topic }]
  llm: { provider: openai-compatible, model: fixture-model, baseURL: "${llm.baseURL}" }
  agents:
    - { name: analyst, role: Analyst, goal: "Understand {topic}" }
  tasks:
    - { name: research, agent: analyst, description: "Research the secret-free topic {topic}", expectedOutput: "Facts" }
    - { name: summary, agent: analyst, description: "Summarise", expectedOutput: "A paragraph" }
  runner: { retries: 0 }
`;

/** Three tasks, the first calling the MCP server's tool; the LLM's key and the server's bearer from Secrets. */
const tracedCrew = () => `apiVersion: kubecrew.io/v1alpha1
kind: Crew
metadata: { name: traced }
spec:
  inputs: [{ name: topic }]
  llm:
    provider: openai-compatible
    model: fixture-model
    baseURL: "${llm.baseURL}"
    apiKeySecretRef: { name: otel-llm, key: api-key }
  mcpServers:
    - name: facts
      url: "${mcp.url}"
      headers: [{ name: Authorization, valueFrom: { secretKeyRef: { name: otel-mcp, key: authorization } } }]
  agents:
    - { name: analyst, role: Analyst, goal: "Understand {topic}", mcps: [facts], maxIter: 5 }
  tasks:
    - { name: research, agent: analyst, description: "Research the secret-free topic {topic}", expectedOutput: "Facts" }
    - { name: summary, agent: analyst, description: "Summarise", expectedOutput: "A paragraph" }
    - { name: headline, agent: analyst, description: "Title it", expectedOutput: "A headline" }
  runner: { retries: 0 }
`;

async function createSecret(name: string, key: string, value: string): Promise<void> {
  const manifest = await kubectl(kubeconfig, [
    ...["create", "secret", "generic", name, "-n", system.namespace, `--from-literal=${key}=${value}`],
    ...["--dry-run=client", "-o", "yaml"],
  ]);
  await kubectl(kubeconfig, ["apply", "-n", system.namespace, "-f", "-"], manifest);
}

beforeAll(async () => {
  if (installed) return; // the chart's pods cannot reach this machine's loopback collector
  [collector, llm, mcp] = await Promise.all([
    startCollector(),
    startLlmFixture(hostForPods()),
    startFixtureMcpServer(hostForPods()),
  ]);
  tracing = startTracing({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.otlpEndpoint }, serviceName: "kubecrew-api" });
  system = await startOwnSystem(kubeconfig, "otel", { crews: [crew()] });
  await createSecret("otel-llm", "api-key", API_KEY);
  await createSecret("otel-mcp", "authorization", `Bearer ${MCP_BEARER}`);
  await applyCrew(kubeconfig, system.namespace, tracedCrew());
  controller = await system.startController({
    identity: "otel-a",
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.otlpEndpoint, KUBECREW_LLM_PRICES: JSON.stringify(PRICES) },
  });
});

afterAll(async () => {
  await system?.stop();
  await tracing?.stop();
  await Promise.all([collector?.stop(), llm?.stop(), mcp?.stop()]);
});

const children = (spans: StoredSpan[], parent: StoredSpan) => spans.filter((s) => s.parentId === parent.spanId);

describe.skipIf(installed)("observability on a cluster", () => {
  it("one trace from the kickoff through the execution and the controller's Job starts to each task's LLM calls", async () => {
    llm.enqueue(
      toolCalls({ name: "lookup", input: { key: "tides" } }),
      answer("Tides follow the moon.", { inputTokens: 30, outputTokens: 5 }),
      answer("In short: the moon.", { inputTokens: 40, outputTokens: 4 }),
      answer("The moon pulls.", { inputTokens: 20, outputTokens: 3 }),
    );
    const id = await kickoff(system.api, "traced");
    const final = await finalStatus(system.api, "traced", id);
    expect(final).toMatchObject({ status: "completed", result: { output: "The moon pulls." } });
    // The runner reached the MCP server with the Secret's bearer, and the LLM with the Secret's key.
    expect(mcp.requests.map((h) => h.authorization)).toContain(`Bearer ${MCP_BEARER}`);
    expect(llm.requests.map((r) => r.headers.authorization)).toContain(`Bearer ${API_KEY}`);
    expect(final.trace_id).toMatch(/^[0-9a-f]{32}$/);
    await tracing.stop(); // sends the API's buffer (this process traces nothing more)
    const spans = await waitFor(
      "the execution's spans at the collector",
      async () => {
        const all = collector.spans().filter((s) => s.traceId === final.trace_id);
        const names = all.map((s) => s.name);
        return names.filter((n) => n.startsWith("chat ")).length === 4 &&
          names.filter((n) => n.startsWith("start_task ")).length === 3 &&
          names.includes("execute_tool lookup") &&
          names.includes("kickoff traced") &&
          names.includes("execution traced")
          ? all
          : undefined;
      },
      60_000,
    );
    const root = spans.find((s) => s.name === "kickoff traced")!;
    expect(root).toMatchObject({ service: "kubecrew-api" });
    // kickoff → execution (the controller's, recorded as the execution finished) → start_task → task → chat
    const executions = children(spans, root);
    expect(executions.map((s) => [s.name, s.service, s.attributes["kubecrew.phase"]])).toEqual([
      ["execution traced", "kubecrew-controller", "Succeeded"],
    ]);
    expect(spans.filter((s) => s.name.startsWith("execution "))).toHaveLength(1);
    const starts = children(spans, executions[0]!).filter((s) => s.name.startsWith("start_task "));
    expect(starts.map((s) => [s.name, s.service]).sort()).toEqual([
      ["start_task headline", "kubecrew-controller"],
      ["start_task research", "kubecrew-controller"],
      ["start_task summary", "kubecrew-controller"],
    ]);
    for (const start of starts) {
      const [task] = children(spans, start);
      const name = String(start.attributes["kubecrew.task"]);
      expect(task).toMatchObject({ name: `task ${name}`, service: "kubecrew-runner" });
      // The pod it ran in: its Job's (the one start_task created), in the execution's namespace.
      const job = String(start.attributes["k8s.job.name"]);
      expect(job).toBe(`${id}-${["research", "summary", "headline"].indexOf(name)}`);
      expect(task!.attributes["k8s.job.name"]).toBe(job);
      expect(task!.resource).toMatchObject({ "k8s.namespace.name": system.namespace });
      expect(String(task!.resource["k8s.pod.name"])).toMatch(new RegExp(`^${job}-[a-z0-9]{5}$`));
      const chats = children(spans, task!).filter((s) => s.name.startsWith("chat "));
      expect(chats).toHaveLength(name === "research" ? 2 : 1);
    }
    // The tool call under its task's span, naming the MCP server.
    const research = spans.find((s) => s.name === "task research")!;
    const tool = spans.find((s) => s.name === "execute_tool lookup")!;
    expect(tool.parentId).toBe(research.spanId);
    expect(tool).toMatchObject({ service: "kubecrew-runner", attributes: { "kubecrew.mcp.server": "facts" } });
    const tokens = spans
      .filter((s) => s.name.startsWith("chat "))
      .map((s) => [s.attributes["gen_ai.usage.input_tokens"], s.attributes["gen_ai.usage.output_tokens"]]);
    expect(tokens).toContainEqual([30, 5]);
    expect(tokens).toContainEqual([40, 4]);
    expect(tokens).toContainEqual([20, 3]);
    // The LLM spans' GenAI token counts add up to the usage /status reports.
    const sum = (i: number) => tokens.reduce((n, t) => n + Number(t[i]), 0);
    expect(final.usage).toMatchObject({ input_tokens: sum(0), output_tokens: sum(1) });
    const everything = JSON.stringify(spans);
    expect(everything).not.toContain("secret-free topic"); // the prompt
    expect(everything).not.toContain(API_KEY);
    expect(everything).not.toContain(MCP_BEARER);
    expect(everything).not.toContain("Bearer ");
  });

  it("counts a batch of executions' tokens into kubecrew_llm_tokens_total by crew, model and direction", async () => {
    const metric = (direction: string) =>
      controller.metric(
        `kubecrew_llm_tokens_total{crew="counted",model="openai-compatible/fixture-model",direction="${direction}"}`,
      );
    const before = { input: (await metric("input")) || 0, output: (await metric("output")) || 0 };
    const usages = [
      [11, 2],
      [13, 3],
      [17, 5],
      [19, 7],
      [23, 11],
      [29, 13],
    ];
    llm.enqueue(...usages.map(([i, o]) => answer("ok", { inputTokens: i!, outputTokens: o! })));
    const ids = [];
    for (let n = 0; n < 3; n++) ids.push(await kickoff(system.api, "counted"));
    for (const id of ids) expect(await finalStatus(system.api, "counted", id)).toMatchObject({ status: "completed" });
    const want = {
      input: before.input + usages.reduce((n, [i]) => n + i!, 0),
      output: before.output + usages.reduce((n, [, o]) => n + o!, 0),
    };
    await waitFor("the counters", async () => ((await metric("input")) === want.input ? true : undefined), 30_000);
    expect({ input: await metric("input"), output: await metric("output") }).toEqual(want);
  });

  it("writes a finished execution's usage and cost on its CrewExecution status and into the cost counter", async () => {
    const cost = () =>
      controller.metric(`kubecrew_llm_cost_usd_total{crew="counted",model="openai-compatible/fixture-model"}`);
    const before = (await cost()) || 0;
    llm.enqueue(
      answer("Tides follow the moon.", { inputTokens: 1000, outputTokens: 100 }),
      answer("In short: the moon.", { inputTokens: 2000, outputTokens: 300 }),
    );
    const id = await kickoff(system.api, "counted");
    expect(await finalStatus(system.api, "counted", id)).toMatchObject({ status: "completed" });
    const execution = await system.client.get<{
      status: { usage?: unknown; tasks: { name: string; usage?: unknown }[] };
    }>(`/apis/kubecrew.io/v1alpha1/namespaces/${system.namespace}/crewexecutions/${id}`);
    // $2 and $10 per million: 1000 × 2 + 100 × 10 = $0.003; 2000 × 2 + 300 × 10 = $0.007.
    expect(execution.status.usage).toEqual({ inputTokens: 3000, outputTokens: 400, totalTokens: 3400, costUsd: 0.01 });
    expect(execution.status.tasks.map((t) => [t.name, t.usage])).toEqual([
      ["research", { inputTokens: 1000, outputTokens: 100, totalTokens: 1100, costUsd: 0.003 }],
      ["summary", { inputTokens: 2000, outputTokens: 300, totalTokens: 2300, costUsd: 0.007 }],
    ]);
    await waitFor("the cost counter", async () => ((await cost()) > before + 0.0099 ? true : undefined), 30_000);
    expect((await cost()) - before).toBeCloseTo(0.01, 9);
  });
});
