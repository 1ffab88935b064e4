import { tmpdir } from "node:os";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, beforeEach, afterEach, describe, expect, it } from "vitest";
import type { RunningDev } from "../../dev/start.ts";
import { launchChromium, tabThroughControls } from "../support/browser.ts";
import type { BrowserDocument } from "../support/browser-dom.ts";

declare const document: BrowserDocument;
declare const window: Record<string, unknown>;
declare const location: { hash: string };
import { crewYaml, startTestDev, tokens } from "../support/dev-server.ts";

/** The README shows these: the test run takes them (commit them again when the pages change). */
const SCREENSHOTS = process.env.KUBECREW_SCREENSHOT_DIR ?? join(tmpdir(), "kubecrew-console-screenshots");

let dev: RunningDev;
let browser: Browser;
let context: BrowserContext;
let page: Page;
beforeAll(async () => {
  mkdirSync(SCREENSHOTS, { recursive: true });
  // slow: each of its 3 tasks waits 1.5 s in the mock model, long enough to watch it run and to stop it.
  [dev, browser] = await Promise.all([
    startTestDev({ "slow.yaml": crewYaml("slow", "sleep-1500", { tasks: 3 }) }),
    launchChromium(),
  ]);
});
afterAll(async () => {
  await browser?.close();
  await dev?.stop();
});
beforeEach(async () => {
  context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  page = await context.newPage();
});
afterEach(() => context?.close());

const consoleUrl = (hash = "") => `${dev.url}/console/${hash}`;
const shot = (name: string) => page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
const statusOf = async (crew: string, id: string) =>
  (await (
    await fetch(`${dev.url}/crews/${crew}/status/${id}`, { headers: { authorization: `Bearer ${tokens.org}` } })
  ).json()) as { status: string; error?: string; result?: { tasks: { task_id: string; output: string }[] } };
const kickoffIdInUrl = () => /executions\/([0-9a-f-]{36})$/.exec(new URL(page.url()).hash)?.[1];

describe("the web console on kubecrew dev", () => {
  it("lists the crews, kicks off the example crew from the form and shows it reach completed live", async () => {
    await page.goto(consoleUrl());
    const research = page.getByRole("article", { name: "research" });
    await expect.poll(() => research.textContent()).toContain("Researches a topic and writes a short report");
    const card = (await research.textContent())!;
    for (const text of ["topic", "The subject to research", "Senior Data Researcher", "analysis", "report"]) {
      expect(card).toContain(text);
    }
    await shot("crews");

    await research.getByRole("link", { name: "Run research" }).click();
    await page.getByLabel("topic").fill("tides");
    await shot("run");
    // A marker on the window: it is gone if anything below reloads the page.
    await page.evaluate(() => Object.assign(window, { stillTheSamePage: true }));
    await page.getByRole("button", { name: "Kick off" }).click();

    const status = page.locator("[data-status]");
    await expect.poll(() => status.getAttribute("data-status")).toBe("running");
    const id = kickoffIdInUrl()!;
    expect(id).toBeDefined();
    await expect.poll(() => status.getAttribute("data-status"), { timeout: 30_000 }).toBe("completed");
    expect(await page.evaluate(() => window.stillTheSamePage)).toBe(true);
    for (const task of ["research", "analysis", "report"]) {
      expect(await page.locator(`[data-task=${task}] .phase`).textContent()).toBe("completed");
    }

    // The research task's output, opened from its summary, is the one the API reports.
    const api = await statusOf("research", id);
    const researchOutput = api.result!.tasks.find((t) => t.task_id === "research")!.output;
    const output = page.locator("[data-task=research] pre.output");
    expect(await output.isVisible()).toBe(false);
    await page.locator("[data-task=research] summary").click();
    expect(await output.isVisible()).toBe(true);
    expect(await output.textContent()).toBe(researchOutput);
    expect(researchOutput).toContain('[mock llm] Answer to task "research"');
    // Its steps came through the event stream: the mock model's one LLM turn, with the answer as its output.
    expect(await page.locator("[data-task=research] .steps .step-llm .step-output").textContent()).toBe(researchOutput);
    await shot("execution");
  });

  it("shows a running execution's progress live and stops it with the Stop button", async () => {
    await page.goto(consoleUrl("#/crews/slow/run"));
    await page.getByLabel("topic").fill("brakes");
    await page.getByRole("button", { name: "Kick off" }).click();
    await expect.poll(() => page.locator("[data-status]").getAttribute("data-status")).toBe("running");
    const id = kickoffIdInUrl()!;

    // The list follows the run: its row moves from the first task to the second without a reload.
    await page.getByRole("link", { name: "Executions", exact: true }).click();
    const row = page.locator(`tr[data-kickoff-id="${id}"]`);
    await expect.poll(() => row.locator(".status").textContent()).toMatch(/running step1 \(0\/3\)/);
    await expect.poll(() => row.locator(".status").textContent(), { timeout: 10_000 }).toMatch(/step2 \(1\/3\)/);
    await shot("executions");

    await row.getByRole("link").click();
    await page.getByRole("button", { name: "Stop" }).click();
    const status = page.locator("[data-status]");
    await expect.poll(() => status.getAttribute("data-status"), { timeout: 15_000 }).toBe("error");
    expect(await page.getByRole("alert").allTextContents()).toContain("Execution stopped");
    expect(await statusOf("slow", id)).toMatchObject({ status: "error", error: "Execution stopped" });
    expect(await page.getByRole("button", { name: "Stop" }).count()).toBe(0);
  });

  it("reaches every control with the keyboard alone, and kicks off with it", async () => {
    await page.goto(consoleUrl());
    await page.getByRole("article", { name: "slow" }).waitFor();
    const crews = await tabThroughControls(page);
    expect(crews.controls.length).toBeGreaterThanOrEqual(7);
    expect(crews.unreached).toEqual([]);

    await page.goto(consoleUrl("#/crews/research/run"));
    await page.getByLabel("topic").waitFor();
    const run = await tabThroughControls(page);
    expect(run.controls).toEqual(expect.arrayContaining(['input "input-topic"', 'button "Kick off"']));
    expect(run.unreached).toEqual([]);
    // Keyboard only: focus the field by tabbing to it, type, and submit with Enter.
    await page.evaluate(() => document.activeElement?.blur());
    for (let i = 0; i < 20 && (await page.evaluate(() => document.activeElement?.id)) !== "input-topic"; i++) {
      await page.keyboard.press("Tab");
    }
    await page.keyboard.type("keyboards");
    await page.keyboard.press("Enter");
    await expect
      .poll(() => page.locator("[data-status]").getAttribute("data-status"), { timeout: 30_000 })
      .toBe("completed");
    const execution = await tabThroughControls(page);
    expect(execution.controls).toEqual(expect.arrayContaining([expect.stringMatching(/^summary "research/)]));
    expect(execution.unreached).toEqual([]);
    // A task's output opens from the keyboard too.
    await page.locator("[data-task=analysis] summary").focus();
    await page.keyboard.press("Enter");
    expect(await page.locator("[data-task=analysis] pre.output").isVisible()).toBe(true);
  });

  it("shows the not-found view for a malformed or unknown route, without a script error", async () => {
    // Issue 28 item 5: a malformed %-escape in the route threw URIError and left a blank page.
    const errors: string[] = [];
    page.on("pageerror", (err) => errors.push(err.message));
    const notFound = page.getByRole("heading", { name: "Page not found" });
    await page.goto(consoleUrl("#/crews/%E0%A4%A/run"));
    await notFound.waitFor();
    expect(await page.locator("main").textContent()).toContain("#/crews/%E0%A4%A/run");

    // Reached by a link too (a hash change, not a load), and left by the link back to the crews.
    await page.getByRole("link", { name: "Back to the crews" }).click();
    await page.getByRole("article", { name: "research" }).waitFor();
    await page.evaluate(() => (location.hash = "#/crews/research/%ZZ"));
    await notFound.waitFor();
    await page.goto(consoleUrl("#/no-such-page"));
    await notFound.waitFor();
    expect(errors).toEqual([]);
  });

  it("serves a Content-Security-Policy that blocks an inline script", async () => {
    const res = await page.goto(consoleUrl());
    const csp = res!.headers()["content-security-policy"];
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    await page.getByRole("heading", { name: "Crews" }).waitFor();
    const outcome = await page.evaluate(
      () =>
        new Promise<{ ran: boolean; violated: string }>((resolve) => {
          document.addEventListener("securitypolicyviolation", (e) =>
            resolve({ ran: Boolean(window.inlineRan), violated: e.effectiveDirective }),
          );
          const script = document.createElement("script");
          script.textContent = "window.inlineRan = true";
          document.body.append(script);
        }),
    );
    expect(outcome).toEqual({ ran: false, violated: "script-src-elem" });
  });

  it("refuses a state-changing request of the session without its CSRF token (403)", async () => {
    await page.goto(consoleUrl());
    // Signed in by the page itself first (kubecrew dev signs in the local user on the first /console/session without
    // a cookie): asking at the same time would make a second session whose token is not the stored cookie's.
    await page.getByRole("heading", { name: "Crews" }).waitFor();
    const session = (await (await page.request.get(`${dev.url}/console/session`)).json()) as { csrf: string };
    const cookie = (await context.cookies()).map((c) => `${c.name}=${c.value}`).join("; ");
    const kickoff = (headers: Record<string, string>) =>
      fetch(`${dev.url}/crews/research/kickoff`, {
        method: "POST",
        headers: { cookie, "content-type": "application/json", ...headers },
        body: JSON.stringify({ inputs: { topic: "csrf" } }),
      });
    const before = dev.executionIds().length;
    const without = await kickoff({});
    expect(without.status).toBe(403);
    expect(await without.json()).toMatchObject({ error: "Forbidden" });
    expect((await kickoff({ "x-csrf-token": "x".repeat(43) })).status).toBe(403);
    expect(dev.executionIds().length).toBe(before);
    // The same request with the session's token is a kickoff, and without the cookie the API wants a bearer token.
    expect((await kickoff({ "x-csrf-token": session.csrf })).status).toBe(200);
    const noCookie = await fetch(`${dev.url}/crews`, { headers: {} });
    expect(noCookie.status).toBe(401);
  });
});
