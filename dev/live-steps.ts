import { z } from "zod";
import { taskStep } from "../core/task-step.ts";
import { watchRewrittenFile } from "./watch-rewritten-file.ts";

const stepSummary = z.object({
  steps: z.array(taskStep),
  stepCount: z.number().int().min(0),
  toolsUsed: z.array(z.string()),
  /** A whole project's run: which of its tasks the steps are of (runner/io.ts). */
  task: z.object({ name: z.string(), index: z.number().int().min(0), agent: z.string() }).optional(),
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
  return watchRewrittenFile(
    path,
    (text) => {
      const parsed = stepSummary.safeParse(JSON.parse(text));
      if (parsed.success) onChange(parsed.data);
    },
    everyMs,
  );
}
