import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { silentLogger } from "../../core/logger.ts";
import { devConfigSchema } from "../../dev/config.ts";
import { startDev, type RunningDev } from "../../dev/start.ts";
import { HITL_CREW } from "../support/amp-hitl.ts";
import { launchChromium, tabThroughControls } from "../support/browser.ts";
import { consoleSessionCookie } from "../support/console-session.ts";

// Issue 32 item 5: the console's "Waiting for you" — a task's answer that waits for the person who started the run,
// answered from the page (a revision with feedback, then an approval by keyboard) in real Chromium against kubecrew
// dev; the list follows the run by itself, and another user never sees the item.

const SECRET = "console-test-session-secret-0123456789abcdef";
let dev: RunningDev;
let browser: Browser;
let context: BrowserContext;
let page: Page;

beforeAll(async () => {
  const crews = mkdtempSync(join(tmpdir(), "kubecrew-waiting-crews-"));
  writeFileSync(join(crews, "blog.yaml"), HITL_CREW("blog"));
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

type Session = { cookie: string; csrf: string };
const sessionOf = (subject: string) =>
  consoleSessionCookie(SECRET, { kind: "user", crews: "*", subject, admin: false });

async function kickoffAs(session: Session, topic: string): Promise<string> {
  const res = await fetch(`${dev.url}/crews/blog/kickoff`, {
    method: "POST",
    headers: { cookie: session.cookie, "x-csrf-token": session.csrf, "content-type": "application/json" },
    body: JSON.stringify({ inputs: { topic } }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { kickoff_id: string }).kickoff_id;
}

async function statusOf(session: Session, id: string) {
  const res = await fetch(`${dev.url}/crews/blog/status/${id}`, { headers: { cookie: session.cookie } });
  return (await res.json()) as { status: string; result?: string; pending_human_input?: { output: string } };
}

async function signIn(session: Session) {
  const [name, value] = session.cookie.split("=") as [string, string];
  await context.addCookies([{ name, value, url: dev.url }]);
}

const item = (id: string) => page.locator(`li.waiting-item[data-kickoff-id="${id}"]`);

describe("Waiting for you", () => {
  it("lists the person's waiting answer, sends it back with feedback, approves it by keyboard, and the run completes", async () => {
    const dana = sessionOf("dana");
    const erin = sessionOf("erin");
    const mine = await kickoffAs(dana, "tide pools");
    const hers = await kickoffAs(erin, "glaciers");
    await signIn(dana);
    await page.goto(`${dev.url}/console/#/`);
    await page.getByRole("link", { name: "Waiting for you" }).click();
    await page.getByRole("heading", { name: "Waiting for you" }).waitFor();

    // The wait appears by itself once the task has answered; erin's run waits too, but not for dana.
    await item(mine).waitFor({ timeout: 30_000 });
    await expect
      .poll(async () => (await statusOf(erin, hers)).pending_human_input !== undefined, { timeout: 30_000 })
      .toBe(true);
    await page.waitForTimeout(2500); // one more reading of the list, which erin's wait was in time for
    expect(await page.locator("li.waiting-item").count()).toBe(1);
    expect(await item(mine).locator("pre.output").textContent()).toContain("tide pools");
    expect(await page.content()).not.toContain("glaciers");

    const { unreached } = await tabThroughControls(page);
    expect(unreached).toEqual([]);

    // A revision needs feedback; with it, the task runs again and its new answer waits in the same place.
    await item(mine)
      .getByRole("button", { name: /^Revise / })
      .click();
    await expect.poll(() => item(mine).getByRole("alert").textContent()).toMatch(/Say what to change/);
    await item(mine)
      .getByLabel(/^Feedback/)
      .fill("Name one animal.");
    await item(mine)
      .getByRole("button", { name: /^Revise / })
      .click();
    await expect
      .poll(async () => (await item(mine).locator("pre.output").textContent()) ?? "", { timeout: 30_000 })
      .toContain("Name one animal.");

    // Approved from the keyboard: the item goes, and the run completes.
    await item(mine)
      .getByRole("button", { name: /^Approve / })
      .focus();
    await page.keyboard.press("Enter");
    await page.getByText("Nothing waits for you.").waitFor({ timeout: 30_000 });
    await expect.poll(async () => (await statusOf(dana, mine)).status, { timeout: 30_000 }).toBe("completed");
    expect((await statusOf(erin, hers)).status).toBe("running"); // erin's still waits for erin
  });

  it("another user's page does not offer the item, and the API refuses them its answer", async () => {
    const finn = sessionOf("finn");
    const gail = sessionOf("gail");
    const finns = await kickoffAs(finn, "moss");
    await expect
      .poll(async () => (await statusOf(finn, finns)).pending_human_input !== undefined, { timeout: 30_000 })
      .toBe(true);
    await signIn(gail);
    await page.goto(`${dev.url}/console/#/waiting`);
    await page.getByText("Nothing waits for you.").waitFor({ timeout: 30_000 });
    expect(await item(finns).count()).toBe(0);
    const res = await fetch(`${dev.url}/crews/blog/resume`, {
      method: "POST",
      headers: { cookie: gail.cookie, "x-csrf-token": gail.csrf, "content-type": "application/json" },
      body: JSON.stringify({ execution_id: finns, task_id: "draft", is_approve: true, human_feedback: "" }),
    });
    expect(res.status).toBe(404);
  });
});
