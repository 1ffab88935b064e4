import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { RunningDev } from "../../dev/start.ts";
import { launchChromium } from "../support/browser.ts";
import { startTestDev, tokens, waitFor } from "../support/dev-server.ts";
import { answer, startLlmFixture, type LlmFixture } from "../support/llm-fixture.ts";
import { startCollector, type RunningCollector } from "../support/otel-collector.ts";

// The console's execution page, on kubecrew dev with tracing on (the real OpenTelemetry Collector) and a price table:
// the link to the execution's trace built from KUBECREW_TRACE_URL, and the tokens each task used, their sum and cost.
const TRACE_URL = "https://traces.example.com/trace/{trace_id}?from=kubecrew";

let dev: RunningDev;
let llm: LlmFixture;
let collector: RunningCollector;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  [llm, collector, browser] = await Promise.all([startLlmFixture(), startCollector(), launchChromium()]);
  const crew = `apiVersion: kubecrew.io/v1alpha1
kind: Crew
metadata: { name: metered }
spec:
  inputs: [{ name: topic }]
  llm: { provider: openai-compatible, model: priced-model, baseURL: "${llm.baseURL}" }
  agents:
    - { name: writer, role: Writer, goal: "Write about {topic}" }
  tasks:
    - { name: draft, agent: writer, description: "Draft on {topic}", expectedOutput: "A draft" }
    - { name: polish, agent: writer, description: "Polish it", expectedOutput: "Polished" }
  runner: { retries: 0, taskTimeoutSeconds: 60 }
`;
  dev = await startTestDev(
    { "metered.yaml": crew },
    {
      env: {
        KUBECREW_TRACE_URL: TRACE_URL,
        KUBECREW_LLM_PRICES: JSON.stringify({ "priced-model": { input: 3, output: 15 } }),
      },
      runnerEnv: {
        ...process.env,
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.otlpEndpoint,
        OPENAI_API_KEY: "sk-console-usage-test",
        KUBECREW_OUTBOUND_ALLOW_LOOPBACK: "true",
      },
    },
  );
  page = await (await browser.newContext({ viewport: { width: 1200, height: 900 } })).newPage();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await dev?.stop();
  await Promise.all([llm?.stop(), collector?.stop()]);
});

it("links the execution's trace and shows each task's tokens, the total and the cost", async () => {
  llm.enqueue(
    answer("Draft.", { inputTokens: 1200, outputTokens: 300 }),
    answer("Polished.", { inputTokens: 800, outputTokens: 200 }),
  );
  const res = await fetch(`${dev.url}/crews/metered/kickoff`, {
    method: "POST",
    headers: { authorization: `Bearer ${tokens.org}`, "content-type": "application/json" },
    body: JSON.stringify({ inputs: { topic: "tides" } }),
  });
  const { kickoff_id: id } = (await res.json()) as { kickoff_id: string };
  await page.goto(`${dev.url}/console/#/crews/metered/executions/${id}`);
  const status = page.locator("[data-status]");
  await expect.poll(() => status.getAttribute("data-status"), { timeout: 60_000 }).toBe("completed");

  // The link: the operator's template with this execution's trace id, the one /status reports and the collector holds.
  const body = (await (
    await fetch(`${dev.url}/crews/metered/status/${id}`, { headers: { authorization: `Bearer ${tokens.org}` } })
  ).json()) as { trace_id?: string };
  expect(body.trace_id).toMatch(/^[0-9a-f]{32}$/);
  const link = page.getByRole("link", { name: body.trace_id! });
  await expect.poll(() => link.getAttribute("href")).toBe(TRACE_URL.replace("{trace_id}", body.trace_id!));
  expect(await link.getAttribute("rel")).toContain("noopener");
  await waitFor(async () => (collector.spans().some((s) => s.traceId === body.trace_id) ? true : undefined), 15_000);

  // Tokens per task as the fixture reported them, priced at $3 / $15 per million; the sum on the Total row.
  const row = async (label: string) =>
    (await page.locator(`table.usage tr[data-usage="${label}"]`).locator("th, td").allTextContents()).map((t) =>
      t.trim(),
    );
  await expect.poll(() => row("Total")).toEqual(["Total", "2,000", "500", "2,500", "$0.0135"]);
  expect(await row("draft")).toEqual(["draft", "1,200", "300", "1,500", "$0.0081"]);
  expect(await row("polish")).toEqual(["polish", "800", "200", "1,000", "$0.0054"]);
}, 120_000);

it("shows no trace link when the console has no KUBECREW_TRACE_URL", async () => {
  const plain = await startTestDev();
  try {
    const res = await fetch(`${plain.url}/crews/research/kickoff`, {
      method: "POST",
      headers: { authorization: `Bearer ${tokens.org}`, "content-type": "application/json" },
      body: JSON.stringify({ inputs: { topic: "tides" } }),
    });
    const { kickoff_id: id } = (await res.json()) as { kickoff_id: string };
    await page.goto(`${plain.url}/console/#/crews/research/executions/${id}`);
    const status = page.locator("[data-status]");
    await expect.poll(() => status.getAttribute("data-status"), { timeout: 60_000 }).toBe("completed");
    // The page is complete (its usage table is drawn after the status is read), with no link.
    await expect.poll(() => page.locator("table.usage").count()).toBe(1);
    expect(await page.locator("a.trace-link").count()).toBe(0);
  } finally {
    await plain.stop();
  }
}, 120_000);
