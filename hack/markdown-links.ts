/**
 * The relative links of a Markdown file and the anchors its headings make, as GitHub renders them, so a test can
 * check that every link in the docs reaches a file and every `#anchor` a heading (hack/doc-links.test.ts).
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";

/** The lines that are Markdown text: fenced code blocks are blanked out (links and headings in them are examples). */
function proseLines(text: string): string[] {
  let fence: string | undefined;
  return text.split("\n").map((line) => {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (marker && (!fence || marker.startsWith(fence))) {
      fence = fence ? undefined : marker;
      return "";
    }
    return fence ? "" : line;
  });
}

/** A line without its inline code spans, whose brackets and parentheses are not links. */
const withoutCode = (line: string) => line.replace(/(`+)[^`]*?\1/g, "");

/** GitHub's anchor for a heading: lower case, punctuation dropped (but `-` and `_`), spaces as `-`. */
export function headingSlug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/`/g, "")
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "").replace(/ /g, "-");
}

/** Every anchor the file's headings make; a repeated heading gets `-1`, `-2`, … as on GitHub. */
export function headingAnchors(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of proseLines(text)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const slug = headingSlug(heading);
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/** The targets of the file's inline links and images, and of its reference definitions. */
export function linkTargets(text: string): string[] {
  const targets: string[] = [];
  for (const line of proseLines(text)) {
    const prose = withoutCode(line);
    for (const match of prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) targets.push(match[1]!);
    const definition = /^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/.exec(prose);
    if (definition) targets.push(definition[1]!);
  }
  return targets;
}

const isExternal = (target: string) => /^[a-z][a-z0-9+.-]*:/i.test(target);

/** Each relative link of `file` (a path under `repo`) that reaches no file, or no heading of the file it names. */
export function brokenLinks(repo: string, file: string): string[] {
  const text = readFileSync(join(repo, file), "utf8");
  const problems: string[] = [];
  for (const target of linkTargets(text)) {
    if (isExternal(target)) continue;
    const [path = "", anchor] = target.split("#", 2);
    const resolved = path ? join(dirname(join(repo, file)), decodeURIComponent(path)) : join(repo, file);
    if (!existsSync(resolved)) {
      problems.push(`${file}: ${target}: no such file (${relative(repo, resolved)})`);
      continue;
    }
    if (anchor === undefined || !resolved.endsWith(".md")) continue;
    if (!headingAnchors(readFileSync(resolved, "utf8")).has(anchor))
      problems.push(`${file}: ${target}: ${relative(repo, resolved)} has no heading with the anchor #${anchor}`);
  }
  return problems;
}
