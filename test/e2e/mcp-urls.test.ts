import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { mcpUrlServerName } from "../../core/task-tools.ts";
import { quoteToolResults, startLlmFixture, toolCalls, toolsOffered, type LlmFixture } from "../support/llm-fixture.ts";
import { startFixtureMcpServer, type FixtureMcpServer } from "../support/mcp-servers.ts";
import { kubectl } from "./support/kubectl.ts";
import {
  applyCrew,
  crewNamespace,
  finalStatus,
  kickoff,
  releaseCrewNamespace,
  startClusterApi,
  startControllerProcess,
  type ClusterApi,
  type ControllerProcess,
} from "./support/fixture.ts";
import { hostForPods, installedSystem } from "./support/installed.ts";

/**
 * CrewAI's URL form of `mcps` (`http://<host>:<port>/mcp`, with and without `#tool`) in task pods, against an MCP
 * server built with the official SDK: the task pod's runner accepts its assignment and the model calls the tools.
 * With the suite's own controller on the local node, and against the chart installed on kind.
 */
const kubeconfig = inject("kubeconfig");
let namespace: string;
let controller: ControllerProcess | undefined;
let api: ClusterApi;
let llm: LlmFixture;
let mcp: FixtureMcpServer;
/** The same server under a second path: two MCP URLs on one host. */
let second: string;

const crew = (name: string, mcps: string[]) => `apiVersion: kubecrew.io/v1alpha1
kind: Crew
metadata: { name: ${name} }
spec:
  inputs: [{ name: topic }]
  llm: { provider: openai-compatible, model: fixture-model, baseURL: "${llm.baseURL}" }
  agents:
    - { name: scout, role: Scout, goal: "Find facts about {topic}", mcps: ${JSON.stringify(mcps)} }
  tasks:
    - { name: look, agent: scout, description: "Look {topic} up", expectedOutput: "Facts" }
  runner: { retries: 0 }
`;

beforeAll(async () => {
  const host = hostForPods();
  [llm, mcp] = await Promise.all([startLlmFixture(host), startFixtureMcpServer(host)]);
  second = mcp.url.replace(/\/mcp$/, "/second/mcp");
  namespace = await crewNamespace(kubeconfig, "mcp-urls");
  await applyCrew(kubeconfig, namespace, crew("whole-server", [mcp.url]));
  await applyCrew(kubeconfig, namespace, crew("picked-tools", [`${mcp.url}#lookup`, `${second}#lookup`]));
  if (!installedSystem) controller = await startControllerProcess(kubeconfig, namespace);
  api = await startClusterApi(kubeconfig, namespace);
});

afterAll(async () => {
  await api?.stop();
  await controller?.kill("SIGTERM");
  await llm?.stop();
  await mcp?.stop();
  if (installedSystem) {
    await kubectl(kubeconfig, [
      "delete",
      "crew",
      "whole-server",
      "picked-tools",
      "-n",
      namespace,
      "--ignore-not-found",
    ]);
  }
  if (namespace) await releaseCrewNamespace(kubeconfig, namespace);
});

describe("an agent whose mcps are URLs, in a task pod", () => {
  it("is offered every tool of a server given by its URL alone, and its call reaches the server", async () => {
    const from = llm.requests.length;
    llm.enqueue(toolCalls({ name: "lookup", input: { key: "tides" } }), quoteToolResults());
    const id = await kickoff(api, "whole-server");
    const final = await finalStatus(api, "whole-server", id);
    expect(final.error).toBeUndefined();
    expect(final.status).toBe("completed");
    expect(final.result.output).toContain("Tool lookup returned: value of tides");
    const offered = toolsOffered(llm.requests[from]!.body).map((t) => t.name);
    expect(offered.sort()).toEqual(["broken", "huge", "lookup", "slow"]);
  });

  it("is offered only the #tool picked of each URL; two URLs on one host are two servers", async () => {
    const from = llm.requests.length;
    const secondLookup = `${mcpUrlServerName(second)}_lookup`;
    llm.enqueue(
      toolCalls({ name: "lookup", input: { key: "tides" } }, { name: secondLookup, input: { key: "moon" } }),
      quoteToolResults(),
    );
    const id = await kickoff(api, "picked-tools");
    const final = await finalStatus(api, "picked-tools", id);
    expect(final.error).toBeUndefined();
    expect(final.status).toBe("completed");
    expect(final.result.output).toContain("Tool lookup returned: value of tides");
    expect(final.result.output).toContain(`Tool ${secondLookup} returned: value of moon`);
    expect(toolsOffered(llm.requests[from]!.body).map((t) => t.name)).toEqual(["lookup", secondLookup]);
    expect(mcp.sessions.closed).toBe(mcp.sessions.opened);
  });
});
