import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mcpUrlServerName } from "../../../core/task-tools.ts";
import type { RunningDev } from "../../../dev/start.ts";
import { startTestDev, tokens } from "../../support/dev-server.ts";

// Kickoff refuses a crew whose MCP server URLs the task runner's outbound URL policy refuses (422 naming each server
// and the reason) instead of starting a run whose tool calls could never be made.
const crew = (name: string, servers: string[], mcps: string[]) => `apiVersion: kubecrew.io/v1alpha1
kind: Crew
metadata: { name: ${name} }
spec:
  llm: { provider: mock, model: echo }
  mcpServers:
${servers.map((url, i) => `    - { name: srv${i}, url: "${url}" }`).join("\n")}
  agents:
    - { name: scout, role: Scout, goal: Look, mcps: ${JSON.stringify(mcps)} }
  tasks:
    - { name: look, agent: scout, description: Look, expectedOutput: Facts }
`;

const kickoff = (dev: RunningDev, crewName: string) =>
  fetch(`${dev.url}/crews/${crewName}/kickoff`, {
    method: "POST",
    headers: { authorization: `Bearer ${tokens.org}`, "content-type": "application/json" },
    body: JSON.stringify({ inputs: {} }),
  });

let dev: RunningDev;
let strictRunners: RunningDev;

beforeAll(async () => {
  const crews = {
    "metadata.yaml": crew(
      "metadata",
      ["http://127.0.0.1:9/mcp", "http://169.254.169.254/latest/mcp?token=abc"],
      ["srv0", "srv1#lookup", "http://[fe80::1]:3000/mcp#echo"],
    ),
    "loopback.yaml": crew("loopback", ["http://localhost:9/mcp"], ["srv0", "http://127.0.0.1:9/mcp#echo"]),
  };
  dev = await startTestDev(crews);
  // Task processes whose runners refuse loopback (their environment says so); dev's own policy still allows it.
  strictRunners = await startTestDev(crews, {
    runnerEnv: { ...process.env, KUBECREW_OUTBOUND_ALLOW_LOOPBACK: "false" },
  });
});
afterAll(async () => {
  await dev?.stop();
  await strictRunners?.stop();
});

describe("kickoff of a crew whose MCP server URLs the outbound policy refuses", () => {
  it("is 422 naming each refused server, its field and the reason, and starts nothing", async () => {
    const before = dev.executionIds().length;
    const res = await kickoff(dev, "metadata");
    expect(res.status).toBe(422);
    expect(await res.json()).toEqual({
      error: "Unprocessable Entity",
      message:
        'Crew "metadata" cannot run: MCP server "srv1" (http://169.254.169.254/latest/mcp): 169.254.169.254 is a ' +
        `cloud metadata address; calls to it are refused; MCP server "${mcpUrlServerName("http://[fe80::1]:3000/mcp")}" (http://[fe80::1]:3000/mcp): ` +
        "fe80::1 is a linkLocal address; calls to it are refused",
      details: {
        mcp_servers: [
          {
            field: "spec.mcpServers[1].url",
            server: "srv1",
            url: "http://169.254.169.254/latest/mcp",
            reason: "169.254.169.254 is a cloud metadata address; calls to it are refused",
          },
          {
            field: "spec.agents[0].mcps[2]",
            server: mcpUrlServerName("http://[fe80::1]:3000/mcp"),
            url: "http://[fe80::1]:3000/mcp",
            reason: "fe80::1 is a linkLocal address; calls to it are refused",
          },
        ],
      },
    });
    expect(dev.executionIds()).toHaveLength(before);
  });

  it("judges loopback by the task runners' policy: allowed by default, refused when their environment refuses it", async () => {
    const allowed = await kickoff(dev, "loopback");
    expect(allowed.status).toBe(200);
    const refused = await kickoff(strictRunners, "loopback");
    expect(refused.status).toBe(422);
    const body = (await refused.json()) as { details: { mcp_servers: { field: string; reason: string }[] } };
    expect(body.details.mcp_servers).toEqual([
      {
        field: "spec.mcpServers[0].url",
        server: "srv0",
        url: "http://localhost:9/mcp",
        reason: "localhost is a loopback name; calls to it are refused here",
      },
      {
        field: "spec.agents[0].mcps[1]",
        server: mcpUrlServerName("http://127.0.0.1:9/mcp"),
        url: "http://127.0.0.1:9/mcp",
        reason: "127.0.0.1 is a loopback address; calls to it are refused here",
      },
    ]);
    expect(strictRunners.executionIds()).toHaveLength(0);
  });
});
