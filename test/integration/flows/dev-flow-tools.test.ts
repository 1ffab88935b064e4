import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import type { RunningDev } from "../../../dev/start.ts";
import { startTestDev, tokens, waitFor } from "../../support/dev-server.ts";
import { startFixtureMcpServer, type FixtureMcpServer } from "../../support/mcp-servers.ts";

// Issue 33: kubecrew dev runs a flow's `call: tool` (one runner process calling the tool, no model) and a `call: crew`
// whose crew is a JSON declaration beside the flow's file. Before, both were refused when the crews folder was read.

const headers = { authorization: `Bearer ${tokens.org}`, "content-type": "application/json" };
let dev: RunningDev;
let mcp: FixtureMcpServer;
let quotes: Server;
let origin: string;
const asked: string[] = [];

const toolFlow = (host: string) =>
  stringify({
    apiVersion: "kubecrew.io/v1alpha1",
    kind: "Flow",
    metadata: { name: "quotes", annotations: { "kubecrew.io/allowed-hosts": host } },
    spec: {
      schema: "crewai.flow/v1",
      name: "QuoteFlow",
      state: { type: "dict", default: { item: "tea" } },
      methods: {
        fetch: {
          start: true,
          do: {
            call: "tool",
            ref: "http_request",
            with: { method: "GET", url: `\${'http://${host}/q?item=' + state.item}` },
          },
        },
        verdict: { listen: "fetch", do: { call: "expression", expr: `outputs.fetch.contains('"price": 42')` } },
      },
    },
  });

const brokenFlow = (url: string) => `schema: crewai.flow/v1
name: BrokenFlow
methods:
  call:
    start: true
    do: { call: tool, ref: "${url}#broken" }
`;

const notesFlow = `schema: crewai.flow/v1
name: NotesFlow
methods:
  notes:
    start: true
    do: { call: crew, from_declaration: crews/note_crew, inputs: { topic: "tide pools" } }
  done:
    listen: notes
    do: { call: expression, expr: "'noted: ' + outputs.notes.raw" }
`;

const noteCrew = JSON.stringify({
  name: "note_crew",
  agents: ["scribe"],
  tasks: [{ name: "note", description: "Note {topic}.", expected_output: "A note on {topic}.", agent: "scribe" }],
  process: "sequential",
});
const scribe = JSON.stringify({ role: "Scribe", goal: "Note {topic}", backstory: "Writes short notes." });

beforeAll(async () => {
  quotes = createServer((req, res) => {
    asked.push(`${req.method} ${req.url}`);
    res.writeHead(200, { "content-type": "application/json" }).end('{"price": 42}');
  });
  await new Promise<void>((resolve) => quotes.listen(0, "127.0.0.1", resolve));
  origin = `127.0.0.1:${(quotes.address() as AddressInfo).port}`;
  mcp = await startFixtureMcpServer();
  dev = await startTestDev({
    "quotes.yaml": toolFlow(origin),
    "broken.yaml": brokenFlow(mcp.url),
    "notes.yaml": notesFlow,
    "crews/note_crew/crew.jsonc": noteCrew,
    "crews/note_crew/agents/scribe.jsonc": scribe,
  });
}, 60_000);

afterAll(async () => {
  await dev?.stop();
  await mcp?.stop();
  quotes?.closeAllConnections();
  await new Promise((resolve) => quotes?.close(resolve));
});

// Answers read field by field, as a client would.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Body = Record<string, any>;

async function run(flow: string): Promise<Body> {
  const kickoff = await fetch(`${dev.url}/flows/${flow}/kickoff`, { method: "POST", headers, body: "{}" });
  expect(kickoff.status).toBe(200);
  const { kickoff_id } = (await kickoff.json()) as { kickoff_id: string };
  return waitFor(async () => {
    const res = await fetch(`${dev.url}/flows/${flow}/status/${kickoff_id}`, { headers });
    const body = (await res.json()) as Body;
    return body.status === "running" ? undefined : body;
  }, 60_000);
}

describe("kubecrew dev runs a flow's tools and declared crews", () => {
  it("calls the tool once with the rendered arguments, and the next method reads its text", async () => {
    const done = await run("quotes");
    expect(done.status, JSON.stringify(done)).toBe("completed");
    expect(asked).toEqual(["GET /q?item=tea"]);
    expect(done.result.outputs.fetch).toMatch(/^HTTP 200 OK\n[\s\S]*\{"price": 42\}$/);
    expect(done.result.outputs.verdict).toBe(true);
  });

  it("fails the method on the tool's error answer after one call, as CrewAI calls a tool once", async () => {
    const opened = mcp.sessions.opened;
    const done = await run("broken-flow");
    expect(done.status, JSON.stringify(done)).toBe("error");
    expect(done.error).toContain("the broken tool is broken");
    expect(mcp.sessions.opened - opened).toBe(1);
  });

  it("runs the crew a from_declaration path names beside the flow's file", async () => {
    const done = await run("notes-flow");
    expect(done.status, JSON.stringify(done)).toBe("completed");
    expect(done.result.outputs.notes.raw).toMatch(/^\[mock llm\] Answer to task "note"/);
    expect(done.result.output).toBe(`noted: ${done.result.outputs.notes.raw}`);
  });
});
