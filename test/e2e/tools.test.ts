import http from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, inject, it } from "vitest";
import {
  quoteToolResults,
  startLlmFixture,
  toolCalls,
  toolResultsSent,
  type LlmFixture,
} from "../support/llm-fixture.ts";
import { startFixtureMcpServer, type FixtureMcpServer } from "../support/mcp-servers.ts";
import { crewSuite } from "./support/crew-suite.ts";
import { finalStatus, kickoff } from "./support/fixture.ts";
import { hostForPods } from "./support/installed.ts";
import { kubectl } from "./support/kubectl.ts";

/**
 * An agent that acts, as Job pods: an MCP server (built with the official SDK) whose Authorization header comes from a
 * Secret through the task pod's environment, and http_request to an allowed host; the model is the LLM fixture. With
 * the suite's own controller on the local node, and against the chart installed on kind, where the task pods are real
 * containers that reach the three servers at this machine's address on the kind network.
 */
const kubeconfig = inject("kubeconfig");
let llm: LlmFixture;
let mcp: FixtureMcpServer;
let web: http.Server;
let webHost: string;

const suite = crewSuite(kubeconfig, {
  prefix: "tools",
  before: async () => {
    const host = hostForPods();
    [llm, mcp] = await Promise.all([startLlmFixture(host), startFixtureMcpServer(host)]);
    web = http.createServer((req, res) => res.writeHead(200, { "content-type": "text/plain" }).end(`page ${req.url}`));
    await new Promise<void>((resolve) => web.listen(0, host, resolve));
    webHost = `${host}:${(web.address() as AddressInfo).port}`;
  },
  after: async () => {
    await llm?.stop();
    await mcp?.stop();
    web?.close();
  },
  secrets: { "kb-token": { token: "Bearer kb-from-secret" } },
  crews: () => [
    `apiVersion: kubecrew.io/v1alpha1
kind: Crew
metadata: { name: acting-tools }
spec:
  inputs: [{ name: topic }]
  llm: { provider: openai-compatible, model: fixture-model, baseURL: "${llm.baseURL}" }
  mcpServers:
    - name: kb
      url: "${mcp.url}"
      headers:
        - { name: Authorization, valueFrom: { secretKeyRef: { name: kb-token, key: token } } }
  toolPolicy: { allowedHosts: ["${webHost}"] }
  agents:
    - { name: scout, role: "{topic} Scout", goal: "Find facts", mcps: ["kb#lookup"], tools: [http_request] }
  tasks:
    - { name: look, agent: scout, description: "Look {topic} up", expectedOutput: "Facts" }
  runner: { retries: 0 }
`,
    `apiVersion: kubecrew.io/v1alpha1
kind: Crew
metadata: { name: reaching }
spec:
  llm: { provider: mock, model: call-tools }
  mcpServers:
    - { name: imds, url: "http://169.254.169.254/latest/mcp" }
  agents:
    - { name: scout, role: Scout, goal: Look, mcps: ["imds#lookup", "${mcp.url}#lookup"] }
  tasks:
    - { name: look, agent: scout, description: Look, expectedOutput: Facts }
`,
  ],
});

describe("an agent with tools in a task pod", () => {
  it("calls an MCP tool (header from a Secret) and http_request; the output holds both results", async () => {
    llm.enqueue(
      toolCalls(
        { name: "lookup", input: { key: "tides" } },
        { name: "http_request", input: { method: "GET", url: `http://${webHost}/moon` } },
      ),
      quoteToolResults(),
    );
    const id = await kickoff(suite.api, "acting-tools");
    const final = await finalStatus(suite.api, "acting-tools", id);
    expect(final.status).toBe("completed");
    expect(final.result.output).toContain("Tool lookup returned: value of tides");
    expect(final.result.output).toContain(
      "Tool http_request returned: HTTP 200 OK\ncontent-type: text/plain\n\npage /moon",
    );
    expect(final.result.tasks[0]).toMatchObject({
      steps: 4,
      tools_used: expect.arrayContaining(["lookup", "http_request"]),
    });
    expect(toolResultsSent(llm.requests.at(-1)!.body).map((r) => r.name)).toEqual(["lookup", "http_request"]);
    expect(mcp.requests.at(-1)!.authorization).toBe("Bearer kb-from-secret");
    expect(mcp.sessions.closed).toBe(mcp.sessions.opened);
    expect(JSON.stringify(final)).not.toContain("kb-from-secret");
  });

  it("refuses at kickoff (422) a crew whose MCP server URL the task pods' outbound policy refuses; the suite's own MCP server is allowed", async () => {
    const before = await kubectl(kubeconfig, ["get", "crewexecutions", "-n", suite.namespace, "-o", "name"]);
    const res = await suite.api.call("/crews/reaching/kickoff", { body: { inputs: {} } });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      error: "Unprocessable Entity",
      message:
        'Crew "reaching" cannot run: MCP server "imds" (http://169.254.169.254/latest/mcp): 169.254.169.254 is a ' +
        "cloud metadata address; calls to it are refused",
      details: {
        mcp_servers: [
          {
            field: "spec.mcpServers[0].url",
            server: "imds",
            url: "http://169.254.169.254/latest/mcp",
            reason: "169.254.169.254 is a cloud metadata address; calls to it are refused",
          },
        ],
      },
    });
    expect(await kubectl(kubeconfig, ["get", "crewexecutions", "-n", suite.namespace, "-o", "name"])).toBe(before);
  });
});
