import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { silentLogger } from "../../core/logger.ts";
import { devConfigSchema, repoRoot } from "../../dev/config.ts";
import { startDev, type RunningDev } from "../../dev/start.ts";
import { launchChromium, tabThroughControls } from "../support/browser.ts";
import type { BrowserDocument } from "../support/browser-dom.ts";
import { consoleSessionCookie } from "../support/console-session.ts";

declare const document: BrowserDocument;

const SCREENSHOTS = process.env.KUBECREW_SCREENSHOT_DIR ?? join(tmpdir(), "kubecrew-console-screenshots");
const SECRET = "console-test-session-secret-0123456789abcdef";

let dev: RunningDev;
let browser: Browser;
let context: BrowserContext;
let page: Page;
beforeAll(async () => {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const crews = mkdtempSync(join(tmpdir(), "kubecrew-console-crews-"));
  writeFileSync(join(crews, "research.yaml"), readFileSync(join(repoRoot, "examples/research-crew.yaml")));
  // kubecrew dev as `npm start` runs it: tokens in memory, the token endpoint and the admin API for the console.
  const config = devConfigSchema.parse({
    PORT: "0",
    KUBECREW_CREWS_DIR: crews,
    KUBECREW_CONSOLE_SESSION_SECRET: SECRET,
  });
  [dev, browser] = await Promise.all([startDev(config, silentLogger()), launchChromium()]);
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

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const pageText = () =>
  page.evaluate(() => document.querySelectorAll("body")[Symbol.iterator]().next().value!.textContent);

describe("the Status tab: tokens and service accounts", () => {
  it("creates a user token shown once that works against /status, lists it and revokes it", async () => {
    await page.goto(`${dev.url}/console/#/crews/research/status`);
    await page.getByLabel("Kind").selectOption("user");
    await page.getByLabel("User").fill("alice");
    await page.getByRole("button", { name: "Create token" }).click();
    const secret = page.locator(".shown-once code.secret");
    const token = (await secret.textContent())!;
    expect(token).toMatch(/^kcu_/);
    await page.screenshot({ path: join(SCREENSHOTS, "status.png"), fullPage: true });

    // The token with an HTTP client: kickoff and /status of its own execution.
    const kickoff = await fetch(`${dev.url}/crews/research/kickoff`, {
      method: "POST",
      headers: { ...bearer(token), "content-type": "application/json" },
      body: JSON.stringify({ inputs: { topic: "tokens" } }),
    });
    expect(kickoff.status).toBe(200);
    const { kickoff_id } = (await kickoff.json()) as { kickoff_id: string };
    const status = await fetch(`${dev.url}/crews/research/status/${kickoff_id}`, { headers: bearer(token) });
    expect(status.status).toBe(200);
    expect(((await status.json()) as { status: string }).status).toMatch(/^(running|completed)$/);

    // Shown once: after Done, and after a reload, the list has its id and subject but never the token.
    const row = page.locator("tr[data-token-id]", { hasText: "alice" });
    const id = (await row.getAttribute("data-token-id"))!;
    await page.getByRole("button", { name: "Done" }).click();
    expect(await pageText()).not.toContain(token);
    await page.reload();
    await page.locator(`tr[data-token-id="${id}"]`).waitFor();
    expect(await pageText()).not.toContain(token);

    await page.getByRole("button", { name: `Revoke token ${id}` }).click();
    await expect.poll(() => page.locator(`tr[data-token-id="${id}"]`).count()).toBe(0);
    expect((await fetch(`${dev.url}/crews/research/status/${kickoff_id}`, { headers: bearer(token) })).status).toBe(
      401,
    );
  });

  it("creates a service account whose secret is shown once and exchanges at /oauth/token, then revokes it", async () => {
    await page.goto(`${dev.url}/console/#/crews/research/status`);
    await page.getByLabel("Name (optional)").fill("nightly reports");
    await page.getByRole("button", { name: "Create service account" }).click();
    const [clientId, clientSecret] = await page.locator(".shown-once code.secret").allTextContents();
    const exchange = () =>
      fetch(`${dev.url}/oauth/token`, {
        method: "POST",
        headers: {
          authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString("base64")}`,
          "content-type": "application/x-www-form-urlencoded",
        },
        body: "grant_type=client_credentials",
      });
    const granted = await exchange();
    expect(granted.status).toBe(200);
    const { access_token } = (await granted.json()) as { access_token: string };
    expect((await fetch(`${dev.url}/crews/research/inputs`, { headers: bearer(access_token) })).status).toBe(200);

    await page.getByRole("button", { name: "Done" }).click();
    await page.reload();
    const row = page.locator(`tr[data-client-id="${clientId}"]`);
    expect(await row.textContent()).toContain("nightly reports");
    expect(await pageText()).not.toContain(clientSecret!);

    const { unreached } = await tabThroughControls(page);
    expect(unreached).toEqual([]);

    await page.getByRole("button", { name: `Revoke service account ${clientId}` }).click();
    await expect.poll(() => row.count()).toBe(0);
    expect((await exchange()).status).toBe(401);
  });

  it("refuses the admin API to a session without its CSRF token, and to a user's session", async () => {
    const admin = consoleSessionCookie(SECRET, { kind: "org", crews: "*", subject: "root", admin: true });
    const create = (cookie: string, csrf?: string) =>
      fetch(`${dev.url}/admin/tokens`, {
        method: "POST",
        headers: { cookie, "content-type": "application/json", ...(csrf ? { "x-csrf-token": csrf } : {}) },
        body: JSON.stringify({ kind: "org", crews: ["research"] }),
      });
    expect((await create(admin.cookie)).status).toBe(403);
    expect((await create(admin.cookie, admin.csrf)).status).toBe(201);
    const alice = consoleSessionCookie(SECRET, { kind: "user", crews: "*", subject: "alice", admin: false });
    // No admin key is configured: to anyone but a console admin the admin API is absent.
    expect((await create(alice.cookie, alice.csrf)).status).toBe(404);
    expect((await fetch(`${dev.url}/admin/tokens`, { headers: { cookie: alice.cookie } })).status).toBe(404);
  });
});

describe("a user's console", () => {
  it("shows and serves only the user's own executions, in the pages and their JSON endpoints", async () => {
    const carol = consoleSessionCookie(SECRET, { kind: "user", crews: "*", subject: "carol", admin: false });
    const bob = consoleSessionCookie(SECRET, { kind: "user", crews: "*", subject: "bob", admin: false });
    const kickoffAs = async (session: { cookie: string; csrf: string }) => {
      const res = await fetch(`${dev.url}/crews/research/kickoff`, {
        method: "POST",
        headers: { cookie: session.cookie, "x-csrf-token": session.csrf, "content-type": "application/json" },
        body: JSON.stringify({ inputs: { topic: "privacy" } }),
      });
      expect(res.status).toBe(200);
      return ((await res.json()) as { kickoff_id: string }).kickoff_id;
    };
    const mine = await kickoffAs(carol);
    const bobs = await kickoffAs(bob);

    const [name, value] = carol.cookie.split("=") as [string, string];
    await context.addCookies([{ name, value, url: dev.url }]);
    await page.goto(`${dev.url}/console/#/crews/research/executions`);
    await page.locator(`tr[data-kickoff-id="${mine}"]`).waitFor();
    expect(await page.locator("tr[data-kickoff-id]").count()).toBe(1);
    expect(await page.getByRole("link", { name: "Status" }).count()).toBe(0);

    await page.goto(`${dev.url}/console/#/crews/research/executions/${bobs}`);
    await expect.poll(() => page.getByRole("alert").allTextContents()).toContain(`No execution found with ID: ${bobs}`);
    expect(await page.locator("pre.output").count()).toBe(0);

    const as = (path: string, init: RequestInit = {}) =>
      fetch(`${dev.url}${path}`, { ...init, headers: { cookie: carol.cookie, "x-csrf-token": carol.csrf } });
    const list = (await (await as("/crews/research/executions")).json()) as { executions: { kickoff_id: string }[] };
    expect(list.executions.map((e) => e.kickoff_id)).toEqual([mine]);
    expect((await as(`/crews/research/status/${bobs}`)).status).toBe(404);
    expect((await as(`/crews/research/status/${bobs}/events`)).status).toBe(404);
    expect((await as(`/crews/research/stop/${bobs}`, { method: "POST" })).status).toBe(404);
    expect((await as(`/crews/research/status/${mine}`)).status).toBe(200);
  });
});
