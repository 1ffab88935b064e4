/**
 * A project's files on a Python package index, through the standard simple repository API: the JSON page (PEP 691)
 * when the index speaks it, else the HTML page (PEP 503) whose links carry a `#sha256=` fragment.
 */
import type { Fetch } from "../platform/outbound/outbound-fetch.ts";
import { ModelPullError } from "./model-pull-error.ts";

export interface IndexFile {
  filename: string;
  /** Absolute, without the fragment. */
  url: string;
  sha256?: string;
}

export interface ProjectPage {
  /** The page's address (after redirects). */
  url: string;
  files: IndexFile[];
}

const JSON_TYPE = "application/vnd.pypi.simple.v1+json";
const ACCEPT = `${JSON_TYPE}, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.01`;

/** PEP 503's normalized name: runs of `-`, `_`, `.` as one `-`, lower case. */
export const normalizeProject = (name: string) => name.replace(/[-_.]+/g, "-").toLowerCase();

/** The project page's URL under an index base (with or without its trailing slash). */
export const projectPageUrl = (index: string, project: string) =>
  `${index.replace(/\/+$/, "")}/${normalizeProject(project)}/`;

const entities: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };
const decodeEntities = (text: string) =>
  text.replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);/gi, (whole, name: string) => {
    if (name[0] !== "#") return entities[name.toLowerCase()] ?? whole;
    return String.fromCodePoint(
      name[1] === "x" || name[1] === "X" ? parseInt(name.slice(2), 16) : Number(name.slice(1)),
    );
  });

function indexFile(href: string, base: string, filename?: string, sha256?: string): IndexFile {
  const url = new URL(href, base);
  const fragment = /^#sha256=([0-9a-f]{64})$/i.exec(url.hash)?.[1];
  url.hash = "";
  const name = filename ?? decodeURIComponent(url.pathname.split("/").pop() ?? "");
  const digest = (sha256 ?? fragment)?.toLowerCase();
  return { filename: name, url: url.href, ...(digest ? { sha256: digest } : {}) };
}

/** The files of a PEP 691 JSON page. */
export function filesOfJsonPage(page: unknown, base: string): IndexFile[] {
  const files = (page as { files?: unknown }).files;
  if (!Array.isArray(files)) throw new Error("the JSON page has no files list");
  return files.flatMap((f: { filename?: unknown; url?: unknown; hashes?: { sha256?: unknown } }) =>
    typeof f.url === "string" && typeof f.filename === "string"
      ? [indexFile(f.url, base, f.filename, typeof f.hashes?.sha256 === "string" ? f.hashes.sha256 : undefined)]
      : [],
  );
}

/** The files of a PEP 503 HTML page: each `<a href>`, relative to the page or its `<base href>`. */
export function filesOfHtmlPage(html: string, pageUrl: string): IndexFile[] {
  const attribute = (tag: string, name: string) => {
    const m = new RegExp(`\\s${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)'|([^\\s>]+))`, "i").exec(tag);
    return m ? decodeEntities(m[1] ?? m[2] ?? m[3]!) : undefined;
  };
  const baseHref = /<base\s[^>]*>/i.exec(html);
  const base = new URL(attribute(baseHref?.[0] ?? "", "href") ?? "", pageUrl).href;
  return [...html.matchAll(/<a\s[^>]*>([^<]*)<\/a>/gi)].flatMap(([tag, text]) => {
    const href = attribute(tag.slice(0, tag.indexOf(">") + 1), "href");
    return href ? [indexFile(href, base, decodeEntities(text!.trim()) || undefined)] : [];
  });
}

/**
 * An index URL's credentials (`https://user:token@host/simple`, as pip takes them) as a Basic authorization for its
 * origin: fetch refuses a URL that carries them. `base` is the URL without them (for requests and messages).
 */
export function indexAccess(index: string): { base: string; headersFor(url: string): Record<string, string> } {
  if (!URL.canParse(index) || !/^https?:$/.test(new URL(index).protocol)) {
    throw new ModelPullError(`The package index ${JSON.stringify(index)} is no http(s) URL`);
  }
  const url = new URL(index);
  const authorization =
    url.username || url.password
      ? `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString("base64")}`
      : undefined;
  url.username = url.password = "";
  return {
    base: url.href,
    headersFor: (to): Record<string, string> =>
      authorization !== undefined && new URL(to).origin === url.origin ? { authorization } : {},
  };
}

/** GET `<index>/<project>/`, asking for the JSON page first. */
export async function projectPage(fetch: Fetch, index: string, project: string): Promise<ProjectPage> {
  const access = indexAccess(index);
  const pageUrl = projectPageUrl(access.base, project);
  const headers = { ...access.headersFor(pageUrl), accept: ACCEPT };
  const response = await fetch(pageUrl, { headers, redirect: "follow" });
  if (!response.ok) throw new ModelPullError(`GET ${pageUrl}: HTTP ${response.status}`);
  const url = response.url || pageUrl;
  const type = response.headers.get("content-type") ?? "";
  try {
    return type.includes(JSON_TYPE) || type.includes("application/json")
      ? { url, files: filesOfJsonPage(await response.json(), url) }
      : { url, files: filesOfHtmlPage(await response.text(), url) };
  } catch (err) {
    throw new ModelPullError(`${pageUrl} is no project page of a package index: ${(err as Error).message}`);
  }
}
