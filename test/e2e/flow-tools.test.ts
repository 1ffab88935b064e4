import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { stringify } from "yaml";
import { describe, expect, inject, it } from "vitest";
import { startLlmFixture, type LlmFixture } from "../support/llm-fixture.ts";
import { startFixtureMcpServer, type FixtureMcpServer } from "../support/mcp-servers.ts";
import { crewSuite } from "./support/crew-suite.ts";
import { crewYaml, waitFor, type Loose } from "./support/fixture.ts";
import { hostForPods } from "./support/installed.ts";
import { kubectl } from "./support/kubectl.ts";

/**
 * A flow's `call: tool` and `call: crew` with `from_declaration` on a real control plane: a tool method runs as one
 * Job that calls the tool (http_request, to a loopback HTTP server the Flow's allowed hosts name; an MCP server's tool,
 * the SDK fixture server) with no model, its text is `outputs.<method>` for the next method; inside an `each`, one Job
 * per item. A tool that fails fails the flow on its one pod (CrewAI calls a tool once); an evicted pod is replaced. A
 * declared crew is the namespace's Crew its path names, the Flow Ready False until that Crew exists. App actions:
 * flow-app-actions.test.ts.
 */
const kubeconfig = inject("kubeconfig");
let llm: LlmFixture;
let mcp: FixtureMcpServer;
let quotes: Server;
let quotesHost: string;
const asked: string[] = [];

const suite = crewSuite(kubeconfig, {
  prefix: "flow-tools",
  before: async () => {
    [llm, mcp] = await Promise.all([startLlmFixture(hostForPods()), startFixtureMcpServer(hostForPods())]);
    quotes = createServer((req, res) => {
      asked.push(`${req.method} ${req.url}`);
      const item = new URL(req.url ?? "/", "http://quotes").searchParams.get("item");
      res.writeHead(200, { "content-type": "application/json" }).end(`{"item": "${item}", "price": 42}`);
    });
    const host = hostForPods();
    await new Promise<void>((resolve) => quotes.listen(0, host, resolve));
    quotesHost = `${host}:${(quotes.address() as AddressInfo).port}`;
  },
  after: async () => {
    quotes?.closeAllConnections();
    await new Promise((resolve) => quotes?.close(resolve));
    await llm?.stop();
    await mcp?.stop();
  },
  crews: () => [],
});

function flowYaml(name: string, document: unknown, annotations: Record<string, string> = {}): string {
  return stringify({
    apiVersion: "kubecrew.io/v1alpha1",
    kind: "Flow",
    metadata: { name, annotations },
    spec: document,
  });
}

async function readyCondition(name: string): Promise<Loose> {
  const flow = JSON.parse(await kubectl(kubeconfig, ["get", "flow", name, "-n", suite.namespace, "-o", "json"]));
  const condition = flow.status?.conditions?.find((c: Loose) => c.type === "Ready");
  return condition?.observedGeneration === flow.metadata.generation ? condition : undefined;
}

async function finished(flow: string, id: string): Promise<Loose> {
  return waitFor(
    `${flow} run ended`,
    async () => {
      const res = await suite.api.call(`/flows/${flow}/status/${id}`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body.status === "running" ? undefined : res.body;
    },
    120_000,
    250,
  );
}

async function kickoff(flow: string, inputs: Record<string, unknown>): Promise<string> {
  await waitFor(`${flow} served`, async () => (await suite.api.call(`/flows/${flow}/inputs`)).status === 200);
  const res = await suite.api.call(`/flows/${flow}/kickoff`, { body: { inputs } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.kickoff_id as string;
}

async function listOf(kind: string, selector: string): Promise<Loose[]> {
  const args = ["get", kind, "-n", suite.namespace, "-l", selector, "-o", "json"];
  return JSON.parse(await kubectl(kubeconfig, args)).items as Loose[];
}

const childExecutions = (run: string) => listOf("crewexecutions", `kubecrew.io/flow-execution=${run}`);

describe("a flow's tool method on the cluster", () => {
  it("calls http_request in one Job with no model, and the next method uses its text", async () => {
    const document = {
      schema: "crewai.flow/v1",
      name: "QuoteFlow",
      state: {
        type: "json_schema",
        json_schema: { type: "object", properties: { item: { type: "string" } }, required: ["item"] },
      },
      methods: {
        fetch: {
          start: true,
          do: {
            call: "tool",
            ref: "http_request",
            with: { method: "GET", url: `\${'http://${quotesHost}/quote?item=' + state.item}` },
          },
        },
        verdict: {
          listen: "fetch",
          do: { call: "expression", expr: `outputs.fetch.contains('"price": 42') ? 'priced' : 'unpriced'` },
        },
      },
    };
    await suite.applyCrew(flowYaml("quotes", document, { "kubecrew.io/allowed-hosts": quotesHost }));
    expect(await waitFor("quotes judged", () => readyCondition("quotes"))).toMatchObject({ status: "True" });
    const id = await kickoff("quotes", { item: "tea" });
    const final = await finished("quotes", id);
    expect(final.status, JSON.stringify(final)).toBe("completed");
    expect(final.result.tasks.map((t: Loose) => t.task_id)).toEqual(["fetch", "verdict"]);
    expect(final.result.outputs.fetch).toMatch(/^HTTP 200 OK\n/);
    expect(final.result.outputs.fetch).toContain('{"item": "tea", "price": 42}');
    expect(final.result.outputs.verdict).toBe("priced");
    expect(asked).toEqual(["GET /quote?item=tea"]);
    expect(llm.requests).toHaveLength(0);

    // One child execution of the method's Crew, whose one task was one Job.
    const [child] = await childExecutions(id);
    expect(child.spec.crewRef.name).toBe("quotes-fetch");
    expect(await listOf("jobs", `kubecrew.io/execution=${child.metadata.name}`)).toHaveLength(1);
    const results = await listOf("crewtaskresults", `kubecrew.io/execution=${id}`);
    const fetched = results.find((r) => r.metadata.labels["kubecrew.io/task"] === "fetch");
    expect(fetched.spec.jsonDict.output).toBe(final.result.outputs.fetch);
  });

  it("fails the method and the flow after one pod when the host is not one the Flow allows, and never calls it", async () => {
    const document = {
      schema: "crewai.flow/v1",
      name: "RefusedFlow",
      methods: {
        fetch: {
          start: true,
          do: { call: "tool", ref: "http_request", with: { method: "GET", url: `http://${quotesHost}/refused` } },
        },
      },
    };
    await suite.applyCrew(flowYaml("refused", document));
    expect(await waitFor("refused judged", () => readyCondition("refused"))).toMatchObject({ status: "True" });
    const before = asked.length;
    const id = await kickoff("refused", {});
    const final = await finished("refused", id);
    expect(final).toMatchObject({ status: "error" });
    expect(final.error).toContain('The tool "http_request" failed');
    expect(final.error).toContain(`${quotesHost} is not in the crew's toolPolicy.allowedHosts`);
    expect(asked.length).toBe(before);
    // CrewAI calls a tool once: the runner's failure failed the Job, no second pod (the crew's retries are 1).
    const [child] = await childExecutions(id);
    const pods = await listOf("pods", `kubecrew.io/execution=${child.metadata.name}`);
    expect(pods.map((p) => p.status.phase)).toEqual(["Failed"]);
    const job = (await listOf("jobs", `kubecrew.io/execution=${child.metadata.name}`))[0];
    expect(job.status.conditions).toContainEqual(
      expect.objectContaining({ type: "Failed", reason: "PodFailurePolicy" }),
    );
  });
});

describe("a flow's MCP tool and its tools inside an each on the cluster", () => {
  it("calls an MCP server's tool in one Job with no model; its text is the method's output", async () => {
    const document = {
      schema: "crewai.flow/v1",
      name: "LookupFlow",
      state: { type: "dict", default: { key: "tides" } },
      methods: {
        look: { start: true, do: { call: "tool", ref: `${mcp.url}#lookup`, with: { key: "${state.key}" } } },
        told: { listen: "look", do: { call: "expression", expr: "'found: ' + outputs.look" } },
      },
    };
    await suite.applyCrew(flowYaml("lookup", document));
    expect(await waitFor("lookup judged", () => readyCondition("lookup"))).toMatchObject({ status: "True" });
    const opened = mcp.sessions.opened;
    const id = await kickoff("lookup", {});
    const final = await finished("lookup", id);
    expect(final.status, JSON.stringify(final)).toBe("completed");
    expect(final.result.tasks.map((t: Loose) => t.task_id)).toEqual(["look", "told"]);
    expect(final.result.outputs.look).toBe("value of tides");
    expect(final.result.output).toBe("found: value of tides");
    expect(mcp.sessions.opened - opened).toBe(1);
    const [child] = await childExecutions(id);
    expect(await listOf("pods", `kubecrew.io/execution=${child.metadata.name}`)).toHaveLength(1);
    expect(llm.requests).toHaveLength(0);
  });

  it("runs an each's tool step once per item, one Job each, the items' texts in order as the method's output", async () => {
    const document = {
      schema: "crewai.flow/v1",
      name: "PricesFlow",
      state: { type: "dict", default: { items: ["tea", "rice", "salt"] } },
      methods: {
        prices: {
          start: true,
          do: {
            call: "each",
            in: "state.items",
            do: [
              {
                name: "fetch",
                action: {
                  call: "tool",
                  ref: "http_request",
                  with: { method: "GET", url: `\${'http://${quotesHost}/quote?item=' + item}` },
                },
              },
            ],
          },
        },
        priced: {
          listen: "prices",
          do: { call: "expression", expr: `outputs.prices.filter(p, p.contains('"price": 42')).size()` },
        },
      },
    };
    await suite.applyCrew(flowYaml("prices", document, { "kubecrew.io/allowed-hosts": quotesHost }));
    expect(await waitFor("prices judged", () => readyCondition("prices"))).toMatchObject({ status: "True" });
    const before = asked.length;
    const id = await kickoff("prices", {});
    const final = await finished("prices", id);
    expect(final.status, JSON.stringify(final)).toBe("completed");
    const outputs = final.result.outputs.prices as string[];
    expect(outputs).toHaveLength(3);
    ["tea", "rice", "salt"].forEach((item, i) => expect(outputs[i]).toContain(`{"item": "${item}", "price": 42}`));
    expect(final.result.outputs.priced).toBe(3);
    expect(final.result.output).toBe("3");
    expect(asked.slice(before).sort()).toEqual(["GET /quote?item=rice", "GET /quote?item=salt", "GET /quote?item=tea"]);
    const children = await childExecutions(id);
    expect(children.map((c) => c.spec.crewRef.name)).toEqual([
      "prices-prices-fetch",
      "prices-prices-fetch",
      "prices-prices-fetch",
    ]);
    for (const child of children) {
      expect(await listOf("jobs", `kubecrew.io/execution=${child.metadata.name}`)).toHaveLength(1);
    }
    expect(llm.requests).toHaveLength(0);
  });

  it("replaces a tool method's pod evicted mid-call (a disruption, not the tool's failure) and completes", async () => {
    const document = {
      schema: "crewai.flow/v1",
      name: "NapFlow",
      methods: { nap: { start: true, do: { call: "tool", ref: `${mcp.url}#slow`, with: { delayMs: 4000 } } } },
    };
    await suite.applyCrew(flowYaml("nap", document));
    expect(await waitFor("nap judged", () => readyCondition("nap"))).toMatchObject({ status: "True" });
    const opened = mcp.sessions.opened;
    const id = await kickoff("nap", {});
    // Once the runner's call is under way (its MCP session opened), the pod is evicted as a node drain evicts it.
    await waitFor("the slow call made", async () => mcp.sessions.opened > opened || undefined, 60_000);
    const [child] = await childExecutions(id);
    const selector = `kubecrew.io/execution=${child.metadata.name}`;
    const [pod] = await listOf("pods", selector);
    const eviction = { apiVersion: "policy/v1", kind: "Eviction", metadata: { name: pod.metadata.name } };
    const path = `/api/v1/namespaces/${suite.namespace}/pods/${pod.metadata.name}/eviction`;
    await kubectl(kubeconfig, ["create", "--raw", path, "-f", "-"], JSON.stringify(eviction));
    const final = await finished("nap", id);
    expect(final.status, JSON.stringify(final)).toBe("completed");
    expect(final.result.outputs.nap).toBe("slept 4000 ms");
    // The evicted pod is gone (the node deleted it); its replacement made the call again and succeeded. A real
    // kubelet reports the pod's phase after the runner's result is in, so the flow can end while it still says Running.
    const pods = await waitFor("the method's pods settled", async () => {
      const list = await listOf("pods", selector);
      return list.some((p) => p.status.phase === "Running" || p.status.phase === "Pending") ? undefined : list;
    });
    expect(pods.map((p) => [p.metadata.name === pod.metadata.name, p.status.phase])).toEqual([[false, "Succeeded"]]);
    expect(mcp.sessions.opened - opened).toBe(2);
  });
});

describe("a flow's crew from a declaration on the cluster", () => {
  it("is Ready False while the Crew its path names is missing, Ready once it is applied, and runs it", async () => {
    const document = {
      schema: "crewai.flow/v1",
      name: "NotesFlow",
      state: { type: "dict", default: { topic: "tide pools" } },
      methods: {
        notes: {
          start: true,
          do: { call: "crew", from_declaration: "crews/note_crew", inputs: { topic: "${state.topic}" } },
        },
        done: { listen: "notes", do: { call: "expression", expr: "'noted: ' + outputs.notes.raw" } },
      },
    };
    await suite.applyCrew(flowYaml("notes", document));
    const missing = await waitFor("notes judged", () => readyCondition("notes"));
    expect(missing).toMatchObject({ status: "False", reason: "InvalidSpec" });
    expect(missing.message).toContain(
      `methods.notes.do.from_declaration: the Crew "note-crew" (crews/note_crew) does not exist in namespace ${suite.namespace}`,
    );
    expect((await suite.api.call("/flows/notes/kickoff", { body: { inputs: {} } })).status).toBe(404);

    // Its input `tone` has a default the flow does not give: taken, as CrewAI takes a declaration's default inputs.
    await suite.applyCrew(
      crewYaml("note-crew", "mock", { tasks: 1 })
        .replace("inputs: [{ name: topic }]", 'inputs: [{ name: topic }, { name: tone, default: "calm" }]')
        .replace('"Step 1 on {topic}"', '"Step 1 on {topic}, {tone}"'),
    );
    await waitFor("notes Ready", async () => (await readyCondition("notes"))?.status === "True" || undefined);
    const final = await finished("notes", await kickoff("notes", {}));
    expect(final.status, JSON.stringify(final)).toBe("completed");
    expect(final.result.outputs.notes.raw).toMatch(/^\[mock llm\] Answer to task "step1"/);
    expect(final.result.outputs.notes.raw).toContain("Step 1 on tide pools, calm");
    expect(final.result.output).toBe(`noted: ${final.result.outputs.notes.raw}`);
  });
});
