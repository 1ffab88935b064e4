import { readFile, stat } from "node:fs/promises";
import { z } from "zod";
import { taskStep } from "../core/task-step.ts";

const stepSummary = z.object({
  steps: z.array(taskStep),
  stepCount: z.number().int().min(0),
  toolsUsed: z.array(z.string()),
});
export type StepsSoFar = z.infer<typeof stepSummary>;

export interface LiveSteps {
  attempt: number;
  sofar: StepsSoFar;
}

/**
 * Watches a runner's steps file (`kubecrew runner --steps`, rewritten whole after each step) every `everyMs` and hands
 * each new version to `onChange`. Returns the function that stops watching.
 */
export function liveSteps(path: string, onChange: (sofar: StepsSoFar) => void, everyMs = 200): () => void {
  let seen = "";
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    void (async () => {
      const info = await stat(path).catch(() => undefined);
      const version = info ? `${info.mtimeMs}:${info.size}` : "";
      if (!info || version === seen) return;
      seen = version;
      const parsed = stepSummary.safeParse(JSON.parse(await readFile(path, "utf8")));
      if (parsed.success) onChange(parsed.data);
    })()
      .catch(() => undefined)
      .finally(() => (busy = false));
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
