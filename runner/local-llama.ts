/**
 * The llama.cpp engine and the GGUF models of the `local` provider, loaded once per process: every task turn (and
 * every LLM guardrail check) of a runner process uses the same model and context. Calls take turns on its one
 * context sequence.
 */
import { access } from "node:fs/promises";
import { availableParallelism } from "node:os";
import { getLlama, LlamaChat, LlamaLogLevel, type Llama, type LlamaContext } from "node-llama-cpp";
import { KubecrewError } from "../core/errors.ts";

export interface LocalModelSettings {
  /** The GGUF file. */
  path: string;
  contextSize: number;
  /** CPU threads (defaultLocalThreads() when the crew names none). */
  threads: number;
}

/**
 * The threads a model runs on when the crew names none: half the cores, at least one. With every core, llama.cpp's
 * threads wait for each other at each token, so one the machine's other work delays stalls the whole turn: on 2 busy
 * cores, 2 threads ran some 30 times slower than 1 (bench/README.md). node-llama-cpp's own default is at least 4.
 */
export function defaultLocalThreads(cores = availableParallelism()): number {
  return Math.max(1, Math.floor(cores / 2));
}

export interface LoadedModel {
  llama: Llama;
  context: LlamaContext;
  chat: LlamaChat;
  /** Runs `work` when the model's earlier calls have ended (one context sequence, one call at a time). */
  exclusive<T>(work: () => Promise<T>): Promise<T>;
}

/** The model file is missing or cannot be loaded: retrying cannot help. */
export class LocalModelError extends KubecrewError {
  readonly code = "local_model_unavailable";
  override name = "LocalModelError";
}

let engine: Promise<Llama> | undefined;
const loaded = new Map<string, Promise<LoadedModel>>();

/** llama.cpp's prebuilt CPU binary (an npm package): never a build from source or a download at run time. */
function llamaEngine(): Promise<Llama> {
  engine ??= getLlama({ gpu: false, build: "never", logLevel: LlamaLogLevel.error, progressLogs: false });
  return engine;
}

async function load(settings: LocalModelSettings): Promise<LoadedModel> {
  try {
    await access(settings.path);
  } catch {
    throw new LocalModelError(
      `The local model file ${settings.path} does not exist: pull it with \`kubecrew model pull\` (or mount it there)`,
    );
  }
  const llama = await llamaEngine();
  const model = await llama.loadModel({ modelPath: settings.path });
  const context = await model.createContext({ contextSize: settings.contextSize, threads: settings.threads });
  const chat = new LlamaChat({ contextSequence: context.getSequence() });
  let queue: Promise<unknown> = Promise.resolve();
  return {
    llama,
    context,
    chat,
    exclusive<T>(work: () => Promise<T>): Promise<T> {
      const run = queue.then(work, work);
      queue = run.catch(() => undefined);
      return run;
    },
  };
}

/** The model these settings name, loaded on the first call and kept for the process's life. */
export function loadedModel(settings: LocalModelSettings): Promise<LoadedModel> {
  const key = JSON.stringify(settings);
  let model = loaded.get(key);
  if (!model) {
    model = load(settings);
    // A failed load is not kept: the file may be there on the next call.
    model.catch(() => loaded.delete(key));
    loaded.set(key, model);
  }
  return model;
}
