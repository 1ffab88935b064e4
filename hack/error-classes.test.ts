/**
 * kubecrew's errors share one small hierarchy (core/errors.ts: KubecrewError with a stable `code`; ConfigError,
 * HttpError, DependencyUnavailable under it). This fails when product code declares an error class outside it, unless
 * the class is one of the few named here with the reason it stays apart.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..");
const SKIPPED = new Set(["node_modules", ".git", "build", "coverage", "charts", "crds", ".kubecrew"]);

/** Error classes that stay outside the hierarchy, by file, and why. */
const APART: Record<string, string> = {
  // The root itself.
  "core/errors.ts": "KubecrewError",
  // kube/runtime/ is the generic controller runtime: it imports platform/ only (eslint.config.js) and its errors are
  // the apiserver's (a status and a reason), not kubecrew's.
  "kube/runtime/client.ts": "KubeApiError",
  "kube/runtime/worker.ts": "StaleObjectError",
  // Private to decide-flow.ts: thrown and caught inside one function, never seen outside the module.
  "core/flow/decide-flow.ts": "TooManyCalls",
};

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (SKIPPED.has(entry.name)) return [];
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts") ? [path] : [];
  });
}

describe("error classes", () => {
  it("are kubecrew's hierarchy, but for the few named with their reason", () => {
    const bare: Record<string, string> = {};
    for (const path of sources(root)) {
      const file = relative(root, path);
      if (file.startsWith("test/") || file.startsWith("bench/")) continue;
      for (const match of readFileSync(path, "utf8").matchAll(/class (\w+) extends Error\b/g)) bare[file] = match[1]!;
    }
    expect(bare).toEqual(APART);
  });
});
