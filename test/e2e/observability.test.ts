import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startTracing, type Tracing } from "../../platform/telemetry/tracing.ts";
import { answer, startLlmFixture, type LlmFixture } from "../support/llm-fixture.ts";
import { startCollector, type RunningCollector, type StoredSpan } from "../support/otel-collector.ts";
import { finalStatus, kickoff, waitFor, type ControllerProcess } from "./support/fixture.ts";
import { hostForPods, installed } from "./support/installed.ts";
import { startOwnSystem, type OwnSystem } from "./support/own-system.ts";

/**
 * On a real control plane, traced into the real OpenTelemetry Collector: the kickoff's trace reaches the controller
 * (its Job-start spans) and the task pods (their runner's spans under it); kubecrew_llm_tokens_total on the
 * controller's metrics adds up the tokens the LLM fixture reported for a batch of executions; a finished execution's
 * usage and cost (the controller's price table) are on its CrewExecution status and in kubecrew_llm_cost_usd_total.
 * The API runs in this process (its tracer is this process's); the controller and the pods export on their own.
 */
const kubeconfig = inject("kubeconfig");
/** The controller's price table: US dollars per million tokens of the fixture's model. */
const PRICES = { "fixture-model": { input: 2, output: 10 } };
let collector: RunningCollector;
let llm: LlmFixture;
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

beforeAll(async () => {
  if (installed) return; // the chart's pods cannot reach this machine's loopback collector
  [collector, llm] = await Promise.all([startCollector(), startLlmFixture(hostForPods())]);
  tracing = startTracing({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.otlpEndpoint }, serviceName: "kubecrew-api" });
  system = await startOwnSystem(kubeconfig, "otel", { crews: [crew()] });
  controller = await system.startController({
    identity: "otel-a",
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.otlpEndpoint, KUBECREW_LLM_PRICES: JSON.stringify(PRICES) },
  });
});

afterAll(async () => {
  await system?.stop();
  await tracing?.stop();
  await Promise.all([collector?.stop(), llm?.stop()]);
});

const children = (spans: StoredSpan[], parent: StoredSpan) => spans.filter((s) => s.parentId === parent.spanId);

describe.skipIf(installed)("observability on a cluster", () => {
  it("one trace from the kickoff through the execution and the controller's Job starts to each task's LLM calls", async () => {
    llm.enqueue(
      answer("Tides follow the moon.", { inputTokens: 30, outputTokens: 5 }),
      answer("In short: the moon.", { inputTokens: 40, outputTokens: 4 }),
    );
    const id = await kickoff(system.api, "counted");
    const final = await finalStatus(system.api, "counted", id);
    expect(final).toMatchObject({ status: "completed", usage: { input_tokens: 70, output_tokens: 9 } });
    expect(final.trace_id).toMatch(/^[0-9a-f]{32}$/);
    await tracing.stop(); // sends the API's buffer (this process traces nothing more)
    const spans = await waitFor(
      "the execution's spans at the collector",
      async () => {
        const all = collector.spans().filter((s) => s.traceId === final.trace_id);
        const names = all.map((s) => s.name);
        return names.filter((n) => n.startsWith("chat ")).length === 2 &&
          names.filter((n) => n.startsWith("start_task ")).length === 2 &&
          names.includes("kickoff counted") &&
          names.includes("execution counted")
          ? all
          : undefined;
      },
      60_000,
    );
    const root = spans.find((s) => s.name === "kickoff counted")!;
    expect(root).toMatchObject({ service: "kubecrew-api" });
    // kickoff → execution (the controller's, recorded as the execution finished) → start_task → task → chat
    const executions = children(spans, root);
    expect(executions.map((s) => [s.name, s.service, s.attributes["kubecrew.phase"]])).toEqual([
      ["execution counted", "kubecrew-controller", "Succeeded"],
    ]);
    expect(spans.filter((s) => s.name.startsWith("execution "))).toHaveLength(1);
    const starts = children(spans, executions[0]!).filter((s) => s.name.startsWith("start_task "));
    expect(starts.map((s) => [s.name, s.service]).sort()).toEqual([
      ["start_task research", "kubecrew-controller"],
      ["start_task summary", "kubecrew-controller"],
    ]);
    for (const start of starts) {
      const [task] = children(spans, start);
      expect(task).toMatchObject({ name: `task ${start.attributes["kubecrew.task"]}`, service: "kubecrew-runner" });
      const chats = children(spans, task!).filter((s) => s.name.startsWith("chat "));
      expect(chats).toHaveLength(1);
    }
    const tokens = spans
      .filter((s) => s.name.startsWith("chat "))
      .map((s) => [s.attributes["gen_ai.usage.input_tokens"], s.attributes["gen_ai.usage.output_tokens"]]);
    expect(tokens.sort()).toEqual([
      [30, 5],
      [40, 4],
    ]);
    expect(JSON.stringify(spans)).not.toContain("secret-free topic"); // the prompt
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
