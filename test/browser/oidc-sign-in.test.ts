import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { silentLogger } from "../../core/logger.ts";
import { devConfigSchema, repoRoot } from "../../dev/config.ts";
import { startDev, type RunningDev } from "../../dev/start.ts";
import { launchChromium, tabThroughControls } from "../support/browser.ts";
import { startOidcProvider, type OidcTestProvider } from "../support/oidc-provider.ts";
import { freePort } from "../support/ports.ts";

const SCREENSHOTS = process.env.KUBECREW_SCREENSHOT_DIR ?? join(tmpdir(), "kubecrew-console-screenshots");
const client = { client_id: "kubecrew-console", client_secret: "console-client-secret-for-tests" };

let provider: OidcTestProvider;
let dev: RunningDev;
let browser: Browser;
let context: BrowserContext;
let page: Page;
beforeAll(async () => {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const port = await freePort();
  provider = await startOidcProvider({
    clients: [{ ...client, redirect_uris: [`http://127.0.0.1:${port}/console/auth/callback`] }],
  });
  const crews = mkdtempSync(join(tmpdir(), "kubecrew-console-oidc-"));
  writeFileSync(join(crews, "research.yaml"), readFileSync(join(repoRoot, "examples/research-crew.yaml")));
  const config = devConfigSchema.parse({
    PORT: String(port),
    KUBECREW_CREWS_DIR: crews,
    KUBECREW_CONSOLE_OIDC_ISSUER: provider.issuer,
    KUBECREW_CONSOLE_OIDC_CLIENT_ID: client.client_id,
    KUBECREW_CONSOLE_OIDC_CLIENT_SECRET: client.client_secret,
    KUBECREW_CONSOLE_ADMIN_EMAILS: "ops@example.com, ADA@example.com",
  });
  [dev, browser] = await Promise.all([startDev(config, silentLogger()), launchChromium()]);
});
afterAll(async () => {
  await browser?.close();
  await dev?.stop();
  await provider?.stop();
});
beforeEach(async () => {
  provider.account = { sub: "test-user-1", email: "ada@example.com" };
  provider.declineConsent = false;
  context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  page = await context.newPage();
});
afterEach(() => context?.close());

async function signIn(): Promise<void> {
  await page.goto(`${dev.url}/console/`);
  await page.getByRole("link", { name: "Sign in with your organisation's account" }).click();
  await page.getByRole("heading", { name: "Crews" }).waitFor();
}

async function kickOffFromTheForm(topic: string): Promise<string> {
  await page.goto(`${dev.url}/console/#/crews/research/run`);
  await page.getByLabel("topic").fill(topic);
  await page.getByRole("button", { name: "Kick off" }).click();
  await expect
    .poll(() => page.locator("[data-status]").getAttribute("data-status"), { timeout: 30_000 })
    .toBe("completed");
  return /executions\/([0-9a-f-]{36})$/.exec(new URL(page.url()).hash)![1]!;
}

const listedIds = () =>
  page.locator("tr[data-kickoff-id]").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-kickoff-id")));

describe("signing in to the console through OpenID Connect", () => {
  it("signs an admin email in as an org admin (authorization code + PKCE against oidc-provider)", async () => {
    await page.goto(`${dev.url}/console/`);
    // kubecrew dev with a provider configured signs nobody in by itself.
    await page.getByRole("heading", { name: "Sign in" }).waitFor();
    await page.screenshot({ path: join(SCREENSHOTS, "sign-in.png"), fullPage: true });
    expect((await tabThroughControls(page)).unreached).toEqual([]);
    await signIn();
    expect(await page.locator("header .who").textContent()).toContain("Ada Lovelace <ada@example.com> (org admin)");
    await page.goto(`${dev.url}/console/#/crews/research/run`);
    await page.getByRole("button", { name: "Kick off" }).waitFor();
    expect(await page.getByRole("link", { name: "Status" }).count()).toBe(1);
    await kickOffFromTheForm("admins");
  });

  it("signs anyone else in as a user who sees and starts only their own executions", async () => {
    provider.account = { sub: "test-user-2", email: "grace@example.com" };
    await signIn();
    const who = await page.locator("header .who").textContent();
    expect(who).toContain("grace@example.com");
    expect(who).not.toContain("org admin");
    const mine = await kickOffFromTheForm("users");

    await page.goto(`${dev.url}/console/#/crews/research/executions`);
    await page.locator(`tr[data-kickoff-id="${mine}"]`).waitFor();
    expect(await listedIds()).toEqual([mine]);
    expect(await page.getByRole("link", { name: "Status" }).count()).toBe(0);
    expect((await page.request.get(`${dev.url}/admin/tokens`)).status()).toBe(404);

    // The org sees who started it: the user's verified email address.
    const answer = await fetch(`${dev.url}/crews/research/executions`, {
      headers: { authorization: `Bearer ${dev.orgToken}` },
    });
    const listed = ((await answer.json()) as { executions: { kickoff_id: string; requested_by: unknown }[] })
      .executions;
    expect(listed.find((e) => e.kickoff_id === mine)?.requested_by).toEqual({
      kind: "user",
      subject: "grace@example.com",
    });
    expect(listed.length).toBeGreaterThan(1);

    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("heading", { name: "Sign in" }).waitFor();
    expect((await page.request.get(`${dev.url}/crews`)).status()).toBe(401);
  });

  it("shows the provider's refusal and signs nobody in", async () => {
    provider.declineConsent = true;
    await page.goto(`${dev.url}/console/`);
    await page.getByRole("link", { name: "Sign in with your organisation's account" }).click();
    await expect
      .poll(() => page.getByRole("alert").allTextContents())
      .toContain("The provider refused the sign-in: access_denied");
    expect((await page.request.get(`${dev.url}/crews`)).status()).toBe(401);
  });

  it("refuses a callback that this browser did not start", async () => {
    const res = await page.goto(`${dev.url}/console/auth/callback?code=stolen&state=forged`);
    expect(new URL(res!.url()).searchParams.get("sign_in_error")).toMatch(/started elsewhere/);
    expect((await page.request.get(`${dev.url}/crews`)).status()).toBe(401);
  });
});
