import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import type { RunningDev } from "../../../dev/start.ts";
import { crewaiRuns, type ReferenceRun } from "../../support/crewai-flow.ts";
import { startTestDev, tokens, waitFor } from "../../support/dev-server.ts";
import { startLlmFixture, type LlmFixture } from "../../support/llm-fixture.ts";

// A flow's tool method in CrewAI's own runtime and in kubecrew dev, against one loopback HTTP server: CrewAI's ref is
// a Python tool class (a BaseTool that GETs the URL, written here), kubecrew's is its http_request — the one part of
// the document that differs, as kubecrew runs no Python. The same methods in the same order, outputs.<method> the
// tool's text in both (not an object with .raw), and the next method reading it alike.
let dev: RunningDev;
let llm: LlmFixture;
let quotes: Server;
let host: string;
let reference: ReferenceRun;
const asked: string[] = [];

const TOOL_MODULE = `from crewai.tools import BaseTool
import urllib.request


class QuoteTool(BaseTool):
    name: str = "quote"
    description: str = "GETs a URL and answers its body"

    def _run(self, method: str, url: str) -> str:
        with urllib.request.urlopen(urllib.request.Request(url, method=method)) as response:
            return response.read().decode()
`;

const document = (ref: string) => ({
  schema: "crewai.flow/v1",
  name: "QuoteFlow",
  state: { type: "dict", default: { item: "tea" } },
  methods: {
    fetch: {
      start: true,
      do: { call: "tool", ref, with: { method: "GET", url: `\${'http://${host}/q?item=' + state.item}` } },
    },
    verdict: { listen: "fetch", do: { call: "expression", expr: `outputs.fetch.contains('"price": 42')` } },
  },
});

beforeAll(async () => {
  quotes = createServer((req, res) => {
    asked.push(`${req.method} ${req.url}`);
    res.writeHead(200, { "content-type": "application/json" }).end('{"item": "tea", "price": 42}');
  });
  await new Promise<void>((resolve) => quotes.listen(0, "127.0.0.1", resolve));
  host = `127.0.0.1:${(quotes.address() as AddressInfo).port}`;
  llm = await startLlmFixture();
  const python = mkdtempSync(join(tmpdir(), "crewai-tools-"));
  writeFileSync(join(python, "quote_tools.py"), TOOL_MODULE);
  [reference] = (await crewaiRuns([{ definition: document("quote_tools:QuoteTool") }], llm.baseURL, python)) as [
    ReferenceRun,
  ];
  const manifest = stringify({
    apiVersion: "kubecrew.io/v1alpha1",
    kind: "Flow",
    metadata: { name: "quotes", annotations: { "kubecrew.io/allowed-hosts": host } },
    spec: document("http_request"),
  });
  dev = await startTestDev({ "quotes.yaml": manifest });
}, 300_000);

afterAll(async () => {
  await dev?.stop();
  await llm?.stop();
  quotes?.closeAllConnections();
  await new Promise((resolve) => quotes?.close(resolve));
});

describe("a tool method in CrewAI and in kubecrew", () => {
  it("runs the same methods, each tool called once, its text read by the next method alike", async () => {
    expect(reference.error).toBeNull();
    const headers = { authorization: `Bearer ${tokens.org}`, "content-type": "application/json" };
    const kickoff = await fetch(`${dev.url}/flows/quotes/kickoff`, { method: "POST", headers, body: "{}" });
    const { kickoff_id } = (await kickoff.json()) as { kickoff_id: string };
    const done = await waitFor(async () => {
      const res = await fetch(`${dev.url}/flows/quotes/status/${kickoff_id}`, { headers });
      const body = (await res.json()) as {
        status: string;
        result?: { tasks: { task_id: string }[]; outputs: Record<string, unknown> };
      };
      return body.status === "running" ? undefined : body;
    }, 60_000);
    expect(done.status, JSON.stringify(done)).toBe("completed");
    expect(done.result!.tasks.map((t) => t.task_id)).toEqual(reference.methods);
    expect(reference.methods).toEqual(["fetch", "verdict"]);
    expect(asked).toEqual(["GET /q?item=tea", "GET /q?item=tea"]);
    // CrewAI's output is the body as the tool returned it; kubecrew's http_request answers the status line and headers
    // before the body: both texts, holding the same body.
    expect(reference.outputs.fetch).toBe('{"item": "tea", "price": 42}');
    expect(done.result!.outputs.fetch).toEqual(expect.stringContaining('{"item": "tea", "price": 42}'));
    // contains() is a string's: on an object with .raw the expression would fail, in either runtime.
    expect(done.result!.outputs.verdict).toBe(true);
    expect(reference.outputs.verdict).toBe(true);
    expect(llm.requests).toHaveLength(0);
  });
});
