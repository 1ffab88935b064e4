import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
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
import {
  quoteToolResults,
  startLlmFixture,
  toolCalls,
  toolResultsSent,
  type LlmFixture,
} from "../support/llm-fixture.ts";

// Issue 32 item 5: the console's "Waiting for you" — a task's answer that waits for the person who started the run,
// answered from the page (a revision with feedback, then an approval by keyboard) in real Chromium against kubecrew
// dev; the list follows the run by itself, and another user never sees the item. Held tool calls (http_request, which
// acts with no user's account, so an org admin decides, not the user who started the run): approved and denied from
// the page; and followed through the execution's event stream alone (the executions' listing frozen): a decision
// made elsewhere removes an item, the resumed run's next held call appears.

const SECRET = "console-test-session-secret-0123456789abcdef";
let dev: RunningDev;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let llm: LlmFixture;
let target: Server;
let targetHost: string;
/** What the loopback server a held http_request call points at received. */
const received: { method: string; body: string }[] = [];

beforeAll(async () => {
  llm = await startLlmFixture();
  target = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push({ method: req.method!, body: Buffer.concat(chunks).toString("utf8") });
      res.writeHead(201, { "content-type": "text/plain" }).end("posted");
    });
  });
  await new Promise<void>((resolve) => target.listen(0, "127.0.0.1", resolve));
  targetHost = `127.0.0.1:${(target.address() as AddressInfo).port}`;
  const crews = mkdtempSync(join(tmpdir(), "kubecrew-waiting-crews-"));
  writeFileSync(join(crews, "blog.yaml"), HITL_CREW("blog"));
  writeFileSync(
    join(crews, "poster.yaml"),
    `apiVersion: kubecrew.io/v1alpha1
kind: Crew
metadata: { name: poster }
spec:
  llm: { provider: openai-compatible, model: m, baseURL: "${llm.baseURL}" }
  toolPolicy: { allowedHosts: ["${targetHost}"], requireApproval: ["http_request:POST"] }
  agents: [{ name: poster, role: Poster, goal: Post, tools: [http_request], maxIter: 5 }]
  tasks: [{ name: post, agent: poster, description: Post it, expectedOutput: What the server said }]
  runner: { retries: 0 }
`,
  );
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
  target?.closeAllConnections();
  await new Promise((resolve) => target?.close(resolve));
  await llm?.stop();
});
beforeEach(async () => {
  context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  page = await context.newPage();
});
afterEach(() => context?.close());

type Session = { cookie: string; csrf: string };
const sessionOf = (subject: string) =>
  consoleSessionCookie(SECRET, { kind: "user", crews: "*", subject, admin: false });
/** An org admin signed in to the console (as an admin email's OIDC sign-in makes one). */
const ADMIN = "olga@example.com";
const adminSession = () =>
  consoleSessionCookie(SECRET, { kind: "org", crews: "*", subject: ADMIN, admin: true, name: "Olga", user: ADMIN });

async function kickoffAs(session: Session, topic: string, crew = "blog"): Promise<string> {
  const res = await fetch(`${dev.url}/crews/${crew}/kickoff`, {
    method: "POST",
    headers: { cookie: session.cookie, "x-csrf-token": session.csrf, "content-type": "application/json" },
    body: JSON.stringify({ inputs: { topic } }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { kickoff_id: string }).kickoff_id;
}

async function statusOf(session: Session, id: string, crew = "blog") {
  const res = await fetch(`${dev.url}/crews/${crew}/status/${id}`, { headers: { cookie: session.cookie } });
  return (await res.json()) as {
    status: string;
    result?: { output: string };
    pending_human_input?: { output: string };
  };
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

  /** A poster run started by `by` whose model POSTs `body` to the target (a held call), then quotes the result. */
  async function heldPost(by: Session, body: string) {
    llm.enqueue(
      toolCalls({
        name: "http_request",
        input: {
          method: "POST",
          url: `http://${targetHost}/posts`,
          headers: { Authorization: "Bearer t0ken" },
          body,
        },
      }),
      quoteToolResults(),
    );
    const id = await kickoffAs(by, "unused", "poster");
    await expect
      .poll(async () => ((await statusOf(by, id, "poster")) as { pending_tool_calls?: unknown[] }).pending_tool_calls, {
        timeout: 30_000,
      })
      .toHaveLength(1);
    return id;
  }

  it("shows a held tool call to an org admin, not to the user who started the run; Approve makes the call once", async () => {
    received.length = 0;
    const hana = sessionOf("hana");
    const id = await heldPost(hana, "hi");

    // hana started the run, but the call acts with no user's account: it is not hers to decide, nor listed for her;
    // asked anyway, the API tells her who may.
    await signIn(hana);
    await page.goto(`${dev.url}/console/#/waiting`);
    await page.getByText("Nothing waits for you.").waitFor({ timeout: 30_000 });
    await page.waitForTimeout(1000);
    expect(await page.locator(`li.held-call[data-kickoff-id="${id}"]`).count()).toBe(0);
    const [call] = ((await statusOf(hana, id, "poster")) as { pending_tool_calls?: { tool_call_id: string }[] })
      .pending_tool_calls!;
    const hers = await fetch(`${dev.url}/crews/poster/resume`, {
      method: "POST",
      headers: { cookie: hana.cookie, "x-csrf-token": hana.csrf, "content-type": "application/json" },
      body: JSON.stringify({
        execution_id: id,
        task_id: "post",
        tool_call_id: call!.tool_call_id,
        is_approve: true,
        human_feedback: "",
      }),
    });
    expect(hers.status).toBe(403);
    expect(((await hers.json()) as { message: string }).message).toBe(
      "Only an org admin (an org token, or an admin signed in to the console) may approve or deny the call of " +
        "http_request:POST: it acts with the crew's own means, not a user's account",
    );

    // An org admin signs in (a page loaded afresh: going to the same address would only change the hash).
    await context.clearCookies();
    await signIn(adminSession());
    await page.goto("about:blank");
    await page.goto(`${dev.url}/console/#/waiting`);
    const held = page.locator(`li.held-call[data-kickoff-id="${id}"]`);
    await held.waitFor({ timeout: 30_000 });
    expect(await held.locator("h2").textContent()).toContain("http_request:POST");
    expect(await held.textContent()).toContain("started by hana");
    const shown = (await held.locator("pre.arguments").textContent()) ?? "";
    expect(shown).toContain(`http://${targetHost}/posts`);
    expect(shown).toContain("[redacted]");
    expect(shown).not.toContain("t0ken");
    expect(received).toEqual([]); // nothing reached the target while the call waits

    await held.getByRole("button", { name: /^Approve / }).click();
    await expect.poll(() => held.count(), { timeout: 30_000 }).toBe(0);
    await expect.poll(async () => (await statusOf(hana, id, "poster")).status, { timeout: 30_000 }).toBe("completed");
    expect(received).toEqual([{ method: "POST", body: "hi" }]);
    expect((await statusOf(hana, id, "poster")).result!.output).toContain("posted");
  });

  it("Deny with a note: the call is never made and the model is told who denied it and why", async () => {
    received.length = 0;
    const jon = sessionOf("jon");
    const id = await heldPost(jon, "unwanted");
    await signIn(adminSession());
    await page.goto(`${dev.url}/console/#/waiting`);
    const held = page.locator(`li.held-call[data-kickoff-id="${id}"]`);
    await held.waitFor({ timeout: 30_000 });
    await held.getByLabel(/^Note/).fill("Not to this server.");
    await held.getByRole("button", { name: /^Deny / }).click();
    await expect.poll(() => held.count(), { timeout: 30_000 }).toBe(0);
    await expect.poll(async () => (await statusOf(jon, id, "poster")).status, { timeout: 30_000 }).toBe("completed");
    expect(received).toEqual([]);
    const told = toolResultsSent(llm.requests.at(-1)!.body);
    expect(told).toEqual([{ name: "http_request", text: `denied by ${ADMIN}: Not to this server.` }]);
    expect((await statusOf(jon, id, "poster")).result!.output).toContain(`denied by ${ADMIN}: Not to this server.`);
  });

  it("follows held calls through the event stream: a decision made elsewhere and a new held call show at once", async () => {
    received.length = 0;
    const post = (path: string) => ({
      name: "http_request",
      input: { method: "POST", url: `http://${targetHost}/${path}`, body: path },
    });
    llm.enqueue(toolCalls(post("first")), toolCalls(post("second")), quoteToolResults());
    const ivy = sessionOf("ivy");
    const id = await kickoffAs(ivy, "unused", "poster");
    const pendingCalls = async () =>
      ((await statusOf(ivy, id, "poster")) as { pending_tool_calls?: { tool_call_id: string }[] }).pending_tool_calls ??
      [];
    await expect.poll(async () => (await pendingCalls()).length, { timeout: 30_000 }).toBe(1);
    const [first] = await pendingCalls();

    const streams: string[] = [];
    page.on("request", (req) => {
      if (req.url().includes(`/status/${id}/events`)) streams.push(req.url());
    });
    const admin = adminSession();
    await signIn(admin);
    await page.goto(`${dev.url}/console/#/waiting`);
    const heldIds = () =>
      page
        .locator(`li.held-call[data-kickoff-id="${id}"]`)
        .evaluateAll((els) => els.map((e) => e.getAttribute("data-tool-call-id")));
    await expect.poll(heldIds, { timeout: 30_000 }).toEqual([first!.tool_call_id]);
    expect(streams.length).toBeGreaterThan(0);

    // From now on the page cannot learn anything from listing executions: only the execution's stream tells it.
    await page.route("**/crews/*/executions", (route) =>
      route.fulfill({ status: 200, contentType: "application/json", body: JSON.stringify({ executions: [] }) }),
    );
    const resume = (toolCallId: string, approve: boolean, feedback = "") =>
      fetch(`${dev.url}/crews/poster/resume`, {
        method: "POST",
        headers: { cookie: admin.cookie, "x-csrf-token": admin.csrf, "content-type": "application/json" },
        body: JSON.stringify({
          execution_id: id,
          task_id: "post",
          tool_call_id: toolCallId,
          is_approve: approve,
          human_feedback: feedback,
        }),
      });
    // Approved elsewhere (another tab, the API): the item goes; the resumed run holds its next call, which comes.
    expect((await resume(first!.tool_call_id, true)).status).toBe(200);
    await expect
      .poll(
        async () => {
          const ids = await heldIds();
          return ids.length === 1 && ids[0] !== first!.tool_call_id;
        },
        { timeout: 30_000 },
      )
      .toBe(true);
    const [second] = (await heldIds()) as [string];
    const held = page.locator(`li.held-call[data-tool-call-id="${second}"]`);
    expect(await held.locator("pre.arguments").textContent()).toContain("/second");
    expect(received).toEqual([{ method: "POST", body: "first" }]);

    expect((await resume(second, false, "Not twice")).status).toBe(200);
    await expect.poll(heldIds, { timeout: 30_000 }).toEqual([]);
    await expect.poll(async () => (await statusOf(ivy, id, "poster")).status, { timeout: 30_000 }).toBe("completed");
    expect(received).toEqual([{ method: "POST", body: "first" }]); // the denied call was never made

    // Both decisions are steps of the task, where the execution's page shows its steps.
    await page.goto(`${dev.url}/console/#/crews/poster/executions/${id}`);
    const decisions = page.locator(`li.task[data-task="post"] li.step-decision`);
    await expect
      .poll(() => decisions.allTextContents(), { timeout: 30_000 })
      .toEqual([
        expect.stringContaining(`approved by ${ADMIN} (http_request:POST)`),
        expect.stringContaining(`denied by ${ADMIN} (http_request:POST)`),
      ]);
  });
});
