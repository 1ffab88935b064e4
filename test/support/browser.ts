import { chromium, type Browser, type Page } from "playwright-core";
import type { BrowserDocument } from "./browser-dom.ts";

declare const document: BrowserDocument;

/** Debian's chromium (hack/test.sh installs it), driven by playwright-core; KUBECREW_CHROMIUM names another binary. */
export const CHROMIUM = process.env.KUBECREW_CHROMIUM ?? "/usr/bin/chromium";

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, timeout: 30_000 });
}

/**
 * Presses Tab from the top of the page (as many times as there are controls, and a few more) and answers every
 * control (link, button, input, details summary) with whether keyboard focus reached it. The controls are marked
 * first (data-kbd), so each is counted once however often focus passes it.
 */
export async function tabThroughControls(page: Page): Promise<{ controls: string[]; unreached: string[] }> {
  const controls = await page.evaluate(() => {
    const all = [...document.querySelectorAll("a[href], button:not([disabled]), input, select, summary")];
    return all.map((el, i) => {
      el.dataset.kbd = String(i);
      return `${el.tagName.toLowerCase()} "${(el.textContent || el.getAttribute("aria-label") || el.id).trim()}"`;
    });
  });
  await page.evaluate(() => document.activeElement?.blur());
  const reached = new Set<number>();
  for (let i = 0; i < controls.length + 3; i++) {
    await page.keyboard.press("Tab");
    const index = await page.evaluate(() => document.activeElement?.dataset.kbd);
    if (index !== undefined) reached.add(Number(index));
  }
  return { controls, unreached: controls.filter((_, i) => !reached.has(i)) };
}
