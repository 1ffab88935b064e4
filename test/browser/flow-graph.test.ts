import { readFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { repoRoot } from "../../dev/config.ts";
import type { RunningDev } from "../../dev/start.ts";
import { launchChromium, tabThroughControls } from "../support/browser.ts";
import { startTestDev } from "../support/dev-server.ts";

// Issue 33: the console's flow page draws the method graph (methods as boxes, listens and router outcomes as arrows),
// and a run of it live: each method's state, the branches taken, the human_feedback question answered from the page.

const SCREENSHOTS = process.env.KUBECREW_SCREENSHOT_DIR ?? join(tmpdir(), "kubecrew-console-screenshots");

let dev: RunningDev;
let browser: Browser;
let context: BrowserContext;
let page: Page;
beforeAll(async () => {
  mkdirSync(SCREENSHOTS, { recursive: true });
  [dev, browser] = await Promise.all([
    startTestDev(
      { "review-flow.yaml": readFileSync(join(repoRoot, "examples/review-flow.yaml"), "utf8") },
      // The person on this page answers the feedback, not the mock.
      { env: { KUBECREW_MOCK_FEEDBACK_SECONDS: "0" } },
    ),
    launchChromium(),
  ]);
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await dev?.stop();
});
beforeEach(async () => {
  context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
  page = await context.newPage();
});
afterEach(() => context?.close());

const phaseOf = (method: string) => page.locator(`[data-method=${method}]`).getAttribute("data-phase");
const edge = (id: string) => page.locator(`[data-edge="${id}"]`);

describe("the console's flow page", () => {
  it("draws the method graph, runs the flow live, takes the feedback and shows the branches taken", async () => {
    await page.goto(`${dev.url}/console/`);
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Flows" }).click();
    const card = page.getByRole("article", { name: "article-review-flow" });
    await expect.poll(() => card.textContent()).toContain("Research a topic, draft its sections");
    await card.getByRole("link", { name: "article-review-flow" }).click();

    const graph = page.getByRole("img", { name: "Method graph" });
    await expect.poll(() => graph.locator("[data-method]").count()).toBe(9);
    // Arrows: a completion, both halves of the `and` join, a router's outcomes, the feedback's outcomes.
    for (const id of [
      "outline>draft_sections",
      "draft_sections>assemble",
      "research>assemble",
      "check_length>expand:too_short",
      "check_length>review:long_enough",
      "review>publish:approved",
      "review>discard:rejected",
    ]) {
      expect(await edge(id).count(), id).toBe(1);
    }
    expect(await edge("research>assemble").textContent()).toBe("and");
    // Laid out left to right along the listens: a start method before its listener, the join after both.
    const x = async (m: string) => (await page.locator(`[data-method=${m}] rect`).boundingBox())!.x;
    expect(await x("outline")).toBeLessThan(await x("draft_sections"));
    expect(await x("draft_sections")).toBeLessThan(await x("assemble"));
    expect(await x("research")).toBeLessThan(await x("assemble"));
    await page.screenshot({ path: join(SCREENSHOTS, "flow-graph.png"), fullPage: true });

    await page.getByLabel("topic").fill("tide pools");
    await page.getByRole("button", { name: "Kick off" }).click();
    await expect.poll(() => new URL(page.url()).hash).toMatch(/^#\/flows\/article-review-flow\/[0-9a-f-]{36}$/);
    await expect.poll(() => phaseOf("review"), { timeout: 150_000, interval: 250 }).toBe("waiting");
    expect(await page.locator("[data-status]").getAttribute("data-status")).toBe("waiting");
    for (const m of ["outline", "research", "draft_sections", "assemble", "check_length"]) {
      expect(await phaseOf(m), m).toBe("succeeded");
    }
    expect(await phaseOf("expand")).toBe("pending");
    expect(await edge("check_length>review:long_enough").getAttribute("class")).toBe("edge taken");
    expect(await edge("check_length>expand:too_short").getAttribute("class")).toBe("edge");
    const feedback = page.getByRole("form", { name: "Feedback on review" });
    expect(await feedback.textContent()).toContain("Publish this article?");
    await page.screenshot({ path: join(SCREENSHOTS, "flow-run-waiting.png"), fullPage: true });
    // Every control of the page is reached with the keyboard.
    expect((await tabThroughControls(page)).unreached).toEqual([]);

    await feedback.getByLabel(/Your feedback/).fill("Approved, ship it.");
    await feedback.getByRole("button", { name: "Send feedback" }).click();
    await expect
      .poll(() => page.locator("[data-status]").getAttribute("data-status"), { timeout: 60_000 })
      .toBe("completed");
    expect(await phaseOf("publish")).toBe("succeeded");
    expect(await phaseOf("discard")).toBe("pending");
    expect(await edge("review>publish:approved").getAttribute("class")).toBe("edge taken");
    expect(await edge("review>discard:rejected").getAttribute("class")).toBe("edge");
    expect(await page.locator(".outcomes").textContent()).toBe(
      "Branches taken: check_length → long_enough, review → approved",
    );
    expect(await page.locator("pre.output").last().textContent()).toMatch(/^published: \[mock llm\]/);
    await page.screenshot({ path: join(SCREENSHOTS, "flow-run-done.png"), fullPage: true });
  }, 240_000);

  it("says so when the API serves no flow of that name", async () => {
    await page.goto(`${dev.url}/console/#/flows/no-such-flow`);
    await expect
      .poll(() => page.getByRole("alert").textContent())
      .toBe('No flow named "no-such-flow" that you may use.');
  });
});
