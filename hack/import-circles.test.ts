/**
 * No import circles in product code: no file imports, through any chain of imports, a file that imports it back —
 * type-only imports, re-exports and dynamic imports count too (a circle of types still ties the files' meanings in a
 * knot). The layering rule (eslint.config.js) keeps imports pointing down between layers; this keeps them pointing one
 * way inside a layer. The imports are read by TypeScript's own pre-processor, without type checking: fast.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..");
/** Tooling, generated files and dependencies: they may import any layer and are not part of the product. */
const SKIPPED = new Set(["node_modules", ".git", "build", "coverage", "charts", "crds", ".kubecrew", "test", "bench"]);
const TOOLING = new Set(["hack", "examples"]);

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (SKIPPED.has(entry.name) || (dir === root && TOOLING.has(entry.name))) return [];
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts") ? [path] : [];
  });
}

/** Each file's imports of other product files (relative specifiers; packages are outside the graph). */
function importGraph(files: string[]): Map<string, string[]> {
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const imported = ts.preProcessFile(readFileSync(file, "utf8"), true, true).importedFiles;
    const targets = imported
      .filter((i) => i.fileName.startsWith("."))
      .map((i) => resolve(dirname(file), i.fileName))
      .filter((target) => known.has(target));
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

/** The strongly connected components of more than one file (Tarjan): each one a circle of imports. */
function circles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (file: string) => {
    index.set(file, next);
    low.set(file, next);
    next++;
    stack.push(file);
    onStack.add(file);
    for (const target of graph.get(file) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file)!, low.get(target)!));
      } else if (onStack.has(target)) low.set(file, Math.min(low.get(file)!, index.get(target)!));
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1) found.push(component.map((f) => relative(root, f)).sort());
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return found;
}

describe("imports", () => {
  it("form no circle in product code, type-only imports included", () => {
    const files = sources(root);
    expect(files.length).toBeGreaterThan(100);
    expect(circles(importGraph(files))).toEqual([]);
  });

  it("a circle is found, however long, and a file importing itself is not one", () => {
    const graph = new Map([
      ["/a", ["/b"]],
      ["/b", ["/c"]],
      ["/c", ["/a", "/d"]],
      ["/d", ["/d"]],
    ]);
    expect(circles(graph).map((c) => c.length)).toEqual([3]);
  });
});
