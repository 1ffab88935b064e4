import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { brokenLinks, headingAnchors, headingSlug, linkTargets } from "./markdown-links.ts";

const REPO = join(import.meta.dirname, "..");
/** Folders that hold no documentation of ours. */
const SKIPPED = new Set(["node_modules", ".git", "coverage", "build", ".kubecrew"]);

/** Every Markdown file of the repository: the README, docs/, ARCHITECTURE.md and the component READMEs. */
function markdownFiles(dir = ""): string[] {
  return readdirSync(join(REPO, dir)).flatMap((name) => {
    const path = dir ? `${dir}/${name}` : name;
    if (SKIPPED.has(name)) return [];
    if (statSync(join(REPO, path)).isDirectory()) return markdownFiles(path);
    return name.endsWith(".md") ? [path] : [];
  });
}

describe("the documentation's links", () => {
  const files = markdownFiles();

  it("covers the README, docs/ and the component READMEs", () => {
    expect(files).toEqual(expect.arrayContaining(["README.md", "docs/README.md", "docs/api.md", "ARCHITECTURE.md"]));
    expect(files).toEqual(
      expect.arrayContaining(["controller/README.md", "integrations/README.md", "bench/README.md"]),
    );
  });

  it.each(files)("%s: every relative link reaches a file, every #anchor a heading", (file) => {
    expect(brokenLinks(REPO, file)).toEqual([]);
  });
});

describe("README.md", () => {
  const readme = readFileSync(join(REPO, "README.md"), "utf8");

  it("stays a newcomer's page: at most 15,000 bytes, the rest in docs/", () => {
    expect(Buffer.byteLength(readme)).toBeLessThanOrEqual(15_000);
  });

  it("shows the two commands (CI runs the README's test command)", () => {
    expect(readme).toContain("npm install && npm start");
    expect(readme).toMatch(/^npm test\b/m);
  });

  it("links every document in docs/ from the index", () => {
    const index = readFileSync(join(REPO, "docs", "README.md"), "utf8");
    const linked = new Set(linkTargets(index).map((target) => target.split("#")[0]));
    const documents = readdirSync(join(REPO, "docs")).filter((name) => name.endsWith(".md") && name !== "README.md");
    expect(documents.filter((name) => !linked.has(name))).toEqual([]);
  });
});

describe("the link checker", () => {
  it("makes GitHub's anchors from headings", () => {
    expect(headingSlug("Retrying a kickoff safely: `Idempotency-Key`")).toBe(
      "retrying-a-kickoff-safely-idempotency-key",
    );
    expect(headingSlug("Running locally: `kubecrew dev`")).toBe("running-locally-kubecrew-dev");
    expect(headingSlug("`npm test`: how long it takes (from README.md)")).toBe(
      "npm-test-how-long-it-takes-from-readmemd",
    );
    expect([...headingAnchors("# Tests\n\n## Tests\n\n```sh\n# not a heading\n```\n")]).toEqual(["tests", "tests-1"]);
  });

  it("finds links and images outside code, and reference definitions", () => {
    const text =
      "See [a](a.md#x) and ![b](img/b.png), not `[c](c.md)`.\n\n```md\n[d](d.md)\n```\n\n[e]: e.md\n[f](https://x.example/f)";
    expect(linkTargets(text)).toEqual(["a.md#x", "img/b.png", "e.md", "https://x.example/f"]);
  });

  it("reports a missing file and a missing anchor, and accepts what exists", () => {
    const repo = mkdtempSync(join(tmpdir(), "doc-links-"));
    writeFileSync(join(repo, "other.md"), "# Other\n\n## A section\n");
    writeFileSync(
      join(repo, "page.md"),
      "# Page\n\n[ok](other.md#a-section) [self](#page) [gone](missing.md) [no anchor](other.md#nowhere) [web](https://x.example)\n",
    );
    expect(brokenLinks(repo, "page.md")).toEqual([
      "page.md: missing.md: no such file (missing.md)",
      "page.md: other.md#nowhere: other.md has no heading with the anchor #nowhere",
    ]);
  });
});
