import { describe, expect, inject, it } from "vitest";
import { startLlmFixture, type LlmFixture } from "../support/llm-fixture.ts";
import { crewSuite } from "./support/crew-suite.ts";
import { waitFor, type Loose } from "./support/fixture.ts";
import { exampleFlowDocument, flowManifest } from "./support/flow-manifests.ts";
import { hostForPods } from "./support/installed.ts";
import { kubectl } from "./support/kubectl.ts";

/**
 * Declarative CrewAI flows on a real control plane: a Flow applied with kubectl is judged by the controller (Ready, or
 * Ready False naming each problem); a kickoff at /flows/{flow}/ creates a FlowExecution whose methods the controller
 * runs in the graph's order — CEL in the controller, agents as child executions whose tasks are Job pods calling the
 * OpenAI-compatible fixture — with each method's output in a CrewTaskResult; a human_feedback waits for /resume.
 */
const kubeconfig = inject("kubeconfig");
let llm: LlmFixture;

const suite = crewSuite(kubeconfig, {
  prefix: "flows",
  before: async () => {
    llm = await startLlmFixture(hostForPods());
    // Every agent answers the router's first outcome: the router (check_length) takes the long_enough branch.
    llm.defaultAnswer = { text: "long_enough", usage: { inputTokens: 10, outputTokens: 1 } };
  },
  after: () => llm?.stop(),
  crews: () => [],
});

const fixtureModel = () => ({ provider: "openai-compatible", model: "fixture-model", baseURL: llm.baseURL });

async function flowObject(name: string): Promise<Loose> {
  return JSON.parse(await kubectl(kubeconfig, ["get", "flow", name, "-n", suite.namespace, "-o", "json"]));
}

async function ready(name: string): Promise<Loose> {
  return waitFor(`flow ${name} judged`, async () => {
    const flow = await flowObject(name);
    const condition = flow.status?.conditions?.find((c: Loose) => c.type === "Ready");
    return condition?.observedGeneration === flow.metadata.generation ? condition : undefined;
  });
}

async function flowStatus(flow: string, id: string): Promise<Loose> {
  const res = await suite.api.call(`/flows/${flow}/status/${id}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

describe("a declarative flow on the cluster", () => {
  it("runs the example flow: methods in the graph's order, agents as Job pods, a human_feedback resumed, outputs kept", async () => {
    await suite.applyCrew(flowManifest("review", exampleFlowDocument(), fixtureModel()));
    expect(await ready("review")).toMatchObject({ status: "True", reason: "Valid" });
    const table = await kubectl(kubeconfig, ["get", "flows", "-n", suite.namespace]);
    expect(table).toMatch(/^NAME\s+READY\s+METHODS\s+AGE\n/);
    expect(table).toMatch(/\nreview\s+True\s+9\s/);

    // Against an installed system the namespace holds other files' flows too.
    const listed = await waitFor("flow served", async () => {
      const res = await suite.api.call("/flows");
      return res.body.flows.find((f: Loose) => f.name === "review");
    });
    // The apiserver keeps an object's keys sorted: the state's fields come back in that order.
    expect(listed).toMatchObject({ name: "review", flow: "ArticleReviewFlow", inputs: ["sections", "topic"] });

    const kickoff = await suite.api.call("/flows/review/kickoff", { body: { inputs: { topic: "tides" } } });
    expect(kickoff.status, JSON.stringify(kickoff.body)).toBe(200);
    const id = kickoff.body.kickoff_id as string;

    const waiting = await waitFor(
      "review waits for a person",
      async () => {
        const body = await flowStatus("review", id);
        expect(body.status, JSON.stringify(body)).toBe("running");
        return body.state === "PENDING_HUMAN_INPUT" ? body : undefined;
      },
      120_000,
      250,
    );
    expect(waiting).toMatchObject({
      current_task: "review",
      human_feedback: { method: "review", message: "Publish this article?", emit: ["approved", "rejected"] },
    });
    const resumed = await suite.api.call("/flows/review/resume", {
      body: { execution_id: id, human_feedback: "approved, ship it" },
    });
    expect(resumed).toMatchObject({ status: 200, body: { status: "resumed", outcome: "approved" } });

    const final = await waitFor(
      "flow completed",
      async () => {
        const body = await flowStatus("review", id);
        return body.status === "running" ? undefined : body;
      },
      60_000,
      250,
    );
    expect(final.status, JSON.stringify(final)).toBe("completed");
    const order = final.result.tasks.map((t: Loose) => t.task_id);
    expect(order.slice(0, 2).sort()).toEqual(["outline", "research"]);
    expect(order.slice(2)).toEqual(["draft_sections", "assemble", "check_length", "review", "publish"]);
    expect(final.result.outcomes).toEqual([
      { method: "check_length", outcome: "long_enough" },
      { method: "review", outcome: "approved" },
    ]);
    expect(final.result.outputs.outline).toEqual(["tides - background", "tides - current practice", "tides - outlook"]);
    expect(final.result.outputs.draft_sections).toHaveLength(3);
    expect(final.result.outputs.review).toMatchObject({ feedback: "approved, ship it", outcome: "approved" });
    expect(final.result.output).toBe("published: long_enough");

    // The agents asked the model: research, three drafts, assemble, check_length; each draft got its own section.
    const prompts = llm.requests.map((r) => JSON.stringify(r.body.messages));
    expect(prompts).toHaveLength(6);
    for (const section of ["background", "current practice", "outlook"]) {
      expect(prompts.filter((p) => p.includes(`Draft the section tides - ${section}`))).toHaveLength(1);
    }

    // One result per method run, labelled with the run and the method.
    const results = JSON.parse(
      await kubectl(kubeconfig, [
        ...["get", "crewtaskresults", "-n", suite.namespace, "-l", `kubecrew.io/execution=${id}`, "-o", "json"],
      ]),
    ).items as Loose[];
    expect(results.map((r) => r.metadata.labels["kubecrew.io/task"]).sort()).toEqual(
      ["assemble", "check_length", "draft_sections", "outline", "publish", "research", "review"].sort(),
    );
    const fe = await kubectl(kubeconfig, ["get", "fe", id, "-n", suite.namespace]);
    expect(fe).toMatch(/^NAME\s+STATUS\s+PROGRESS\s+CURRENT METHOD\s+DURATION\s+AGE\n/);
    expect(fe).toMatch(new RegExp(`\\n${id}\\s+Succeeded\\s+7/9\\s`));
  });

  it("answers 422 naming the missing state field, and 404 for a flow it does not have", async () => {
    // The flow the first test applies, applied again so that this test runs alone too.
    await suite.applyCrew(flowManifest("review", exampleFlowDocument(), fixtureModel()));
    await ready("review");
    const missing = await suite.api.call("/flows/review/kickoff", { body: { inputs: {} } });
    expect(missing.status).toBe(422);
    expect(missing.body.details.missing_inputs).toEqual(["topic"]);
    expect((await suite.api.call("/flows/nothing/kickoff", { body: { inputs: {} } })).status).toBe(404);
  });

  it("marks a Flow with problems Ready False naming each, and does not serve it", async () => {
    const document = {
      schema: "crewai.flow/v1",
      name: "BrokenFlow",
      methods: {
        first: { start: true, do: { call: "expression", expr: "1 +" } },
        second: { listen: "nowhere", do: { call: "expression", expr: "2" } },
      },
    };
    await suite.applyCrew(flowManifest("broken", document, fixtureModel()));
    const condition = await ready("broken");
    expect(condition).toMatchObject({ status: "False", reason: "InvalidSpec" });
    expect(condition.message).toContain('methods.second.listen: "nowhere" names no method and no router outcome');
    expect(condition.message).toContain("methods.first.do.expr");
    const res = await suite.api.call("/flows/broken/kickoff", { body: { inputs: {} } });
    expect(res.status).toBe(404);
  });

  it("stops a run mid-method: the error says so, its child execution is stopped, the next method never starts", async () => {
    const document = {
      schema: "crewai.flow/v1",
      name: "SlowFlow",
      methods: {
        think: {
          start: true,
          do: { call: "agent", with: { role: "Thinker", goal: "Think", backstory: "Slow.", input: "Think long" } },
        },
        after: { listen: "think", do: { call: "expression", expr: "'never'" } },
      },
    };
    await suite.applyCrew(flowManifest("slow", document, { provider: "mock", model: "sleep-60000" }));
    expect(await ready("slow")).toMatchObject({ status: "True" });
    await waitFor("slow served", async () => (await suite.api.call("/flows/slow/inputs")).status === 200);
    const id = (await suite.api.call("/flows/slow/kickoff", { body: { inputs: {} } })).body.kickoff_id as string;
    const children = async () =>
      JSON.parse(
        await kubectl(kubeconfig, [
          ...["get", "crewexecutions", "-n", suite.namespace, "-l", `kubecrew.io/flow-execution=${id}`, "-o", "json"],
        ]),
      ).items as Loose[];
    await waitFor("think's task running", async () => (await children())[0]?.status?.phase === "Running", 60_000);

    expect(await suite.api.call(`/flows/slow/stop/${id}`, { body: {} })).toMatchObject({
      status: 200,
      body: { status: "stopped" },
    });
    const final = await waitFor("run stopped", async () => {
      const body = await flowStatus("slow", id);
      return body.status === "running" ? undefined : body;
    });
    expect(final).toMatchObject({ status: "error", state: "FAILED", error: "Execution stopped" });
    const [child] = await children();
    expect(child.spec.stop).toBe(true);
    await waitFor("child stopped", async () => (await children())[0].status?.phase === "Stopped", 60_000);
    const fe = JSON.parse(await kubectl(kubeconfig, ["get", "fe", id, "-n", suite.namespace, "-o", "json"]));
    expect(fe.status.methods.map((m: Loose) => m.method)).toEqual(["think"]);
    expect((await suite.api.call(`/flows/slow/stop/${id}`, { body: {} })).status).toBe(409);
  });
});
