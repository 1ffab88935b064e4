import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Ajv } from "ajv";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { z } from "zod";
import { HTTP_REQUEST_TOOL, httpRequestInput } from "../../runner/http-request-tool.ts";
import { testModelDir } from "../support/local-model.ts";
import { startFixtureMcpServer, type FixtureMcpServer } from "../support/mcp-servers.ts";
import pullTestModel from "../support/model-global-setup.ts";
import { finalStatus, jobsOf, kickoff, resultsOf, type Loose } from "./support/fixture.ts";
import { installed } from "./support/installed.ts";
import { startOwnSystem, type OwnSystem } from "./support/own-system.ts";

/**
 * Issue 34 on a real control plane: a crew run by the real model (SmolLM2-135M on llama.cpp, the local provider) in
 * task pods that read the GGUF file from the volume the controller mounts (KUBECREW_RUNNER_MODEL_VOLUME; here a
 * hostPath of the model cache, which the local node binds at /models in the pod's mount namespace). Its tools are an MCP
 * server's and http_request, both on loopback (the local node's pods share the machine's network). Asserts what a
 * real model guarantees under its grammars — a tool call's arguments parse and fit the tool's schema, a structured
 * output fits its schema, answers are not empty, every step is recorded on the CrewTaskResult — never the wording. One
 * crew of two short tasks on one thread: the cluster project runs beside the others on 2 cores. On the local node
 * only: the chart on kind would need the model inside the kind node (docs/local-model.md, "In the tests").
 */
const kubeconfig = inject("kubeconfig");
const LLM =
  "llm: { provider: local, model: smollm2-135m, threads: 1, contextSize: 2048, maxOutputTokens: 64, temperature: 0 }";
const LOOKUP_SCHEMA = {
  type: "object",
  properties: { key: { type: "string" }, verbose: { type: "boolean" } },
  required: ["key"],
};
/** The http_request tool's input schema, as the model is offered it. */
const HTTP_REQUEST_SCHEMA = z.toJSONSchema(httpRequestInput, { target: "draft-7" });
const CITY_SCHEMA = {
  type: "object",
  properties: {
    city: { type: "string", minLength: 1 },
    country: { type: "string", minLength: 1 },
    population: { type: "integer", minimum: 0 },
  },
  required: ["city", "country", "population"],
  additionalProperties: false,
};

let mcp: FixtureMcpServer;
let web: Server;
let webUrl: string;
let system: OwnSystem;

const crew = () => `apiVersion: kubecrew.io/v1alpha1
kind: Crew
metadata: { name: local-model }
spec:
  ${LLM}
  inputs: [{ name: topic }]
  mcpServers: [{ name: fixture, url: "${mcp.url}", tools: [lookup] }]
  toolPolicy: { allowedHosts: ["${new URL(webUrl).host}"] }
  agents:
    - name: scout
      role: Scout
      goal: "Look {topic} up with your tools"
      mcps: ["fixture#lookup"]
      tools: [http_request]
      maxIter: 4
    - { name: clerk, role: Clerk, goal: "Describe {topic} as data" }
  tasks:
    - { name: look, agent: scout, description: "Look up the key {topic} with the lookup tool, and GET ${webUrl}/facts.", expectedOutput: "What the tools returned" }
    - name: describe
      agent: clerk
      description: "Describe the city {topic}."
      expectedOutput: "Its name, country and population"
      outputJson: ${JSON.stringify(CITY_SCHEMA)}
  runner: { retries: 0, taskTimeoutSeconds: 900 }
`;

beforeAll(async () => {
  if (installed) return;
  pullTestModel(); // warm: its digest checked, nothing fetched (npm test pulled it before vitest)
  mcp = await startFixtureMcpServer();
  web = createServer((_req, res) => res.writeHead(200, { "content-type": "text/plain" }).end("Paris is in France."));
  await new Promise<void>((done) => web.listen(0, "127.0.0.1", done));
  webUrl = `http://127.0.0.1:${(web.address() as AddressInfo).port}`;
  system = await startOwnSystem(kubeconfig, "model", {
    crews: [crew()],
    controller: {
      env: {
        KUBECREW_RUNNER_MODEL_VOLUME: JSON.stringify({
          hostPath: { path: testModelDir(process.env), type: "Directory" },
        }),
      },
    },
  });
});

afterAll(async () => {
  await system?.stop();
  await mcp?.stop();
  await new Promise((done) => web?.close(done));
});

/** Every step of the result is there, numbered 0, 1, 2, …, as many as it counts; LLM turns among them. */
function expectEveryStep(result: Loose) {
  const steps: Loose[] = result.spec.steps ?? [];
  expect(steps.map((s) => s.index)).toEqual(steps.map((_, i) => i));
  expect(steps).toHaveLength(result.spec.stepCount);
  expect(steps.some((s) => s.kind === "llm")).toBe(true);
}

describe.skipIf(installed)("the local provider on SmolLM2-135M in task pods", () => {
  it("reads the model from the controller's volume; tool arguments parse, the object fits its schema, every step is recorded", async () => {
    const id = await kickoff(system.api, "local-model", { inputs: { topic: "Paris" } });
    const final = await finalStatus(system.api, "local-model", id, 840_000);
    const results = (await resultsOf(kubeconfig, system.namespace, id)).filter((r) => r.spec.output !== undefined);
    const seen = JSON.stringify({ final, steps: results.map((r) => [r.spec.taskName, r.spec.steps]) });
    expect(final.status, seen).toBe("completed");

    // The model came from the volume, mounted read-only where the runner looks (nothing was downloaded).
    for (const job of await jobsOf(kubeconfig, system.namespace, id)) {
      const pod = job.spec.template.spec;
      expect(pod.volumes).toContainEqual({
        name: "models",
        hostPath: { path: testModelDir(process.env), type: "Directory" },
      });
      expect(pod.containers[0].volumeMounts).toContainEqual({ name: "models", mountPath: "/models", readOnly: true });
      expect(pod.containers[0].env).toContainEqual({ name: "KUBECREW_MODEL_DIR", value: "/models" });
    }

    const tasks: Loose[] = final.result.tasks;
    expect(tasks.map((t) => t.task_id)).toEqual(["look", "describe"]);
    for (const t of tasks) expect(t.output.trim(), seen).not.toBe("");

    const look = results.find((r) => r.spec.taskName === "look");
    const calls: Loose[] = look.spec.steps.filter((s: Loose) => s.kind === "tool");
    // Told to, the model calls a tool; each is offered until it is called once (runner/local-model.ts): at most one
    // call each, then the answer.
    expect(calls.length, seen).toBeGreaterThan(0);
    expect(calls.length, seen).toBeLessThanOrEqual(2);
    expect(new Set(calls.map((c) => c.tool)).size, seen).toBe(calls.length);
    for (const call of calls) {
      const args = JSON.parse(call.input) as Record<string, unknown>;
      const ajv = new Ajv();
      if (call.tool === "lookup") {
        expect(ajv.validate(LOOKUP_SCHEMA, args), `${seen} ${ajv.errorsText()}`).toBe(true);
        expect(call.output).toBe(`value of ${args.key as string}`);
      } else {
        expect(call.tool).toBe(HTTP_REQUEST_TOOL);
        expect(ajv.validate(HTTP_REQUEST_SCHEMA, args), `${seen} ${ajv.errorsText()}`).toBe(true);
      }
    }

    const describeTask = results.find((r) => r.spec.taskName === "describe");
    expect(new Ajv().validate(CITY_SCHEMA, describeTask.spec.jsonDict), seen).toBe(true);
    expect(tasks[1].json_dict).toEqual(describeTask.spec.jsonDict);

    for (const result of [look, describeTask]) expectEveryStep(result);
  }, 900_000);
});
