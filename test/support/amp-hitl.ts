import { spawn } from "node:child_process";
import { join } from "node:path";
import { expect } from "vitest";
import { repoRoot } from "../../dev/config.ts";

/**
 * The AMP client of a crew with a humanInput task (amp_hitl_client.py, Python `requests` as CrewAI's documentation
 * writes one) and what it must see, the same in `kubecrew dev` and on a cluster. The crew: `draft` (humanInput) then
 * `publish`, on the mock model `echo` (each answer is the agent's whole prompt, so it shows what the agent was told).
 */

export const HITL_CREW = (name: string, extra = "") => `apiVersion: kubecrew.io/v1alpha1
kind: Crew
metadata: { name: ${name} }
spec:
  inputs: [{ name: topic }]
  llm: { provider: mock, model: echo }
  agents: [{ name: writer, role: Writer, goal: "Write about {topic}" }]
  tasks:
    - { name: draft, agent: writer, description: "Draft a post on {topic}", expectedOutput: A post, humanInput: true }
    - { name: publish, agent: writer, description: Polish the post, expectedOutput: The final post }
  runner: { retries: 0, humanInputMaxRetries: 1${extra} }
`;

export const WEBHOOK_TOKEN = "hitl-receiver-secret-6c1f0e";
export const FEEDBACK = "Make it shorter and name one animal.";
export const APPROVAL_NOTE = "Good. Keep the headline.";

export interface Hook {
  path: string;
  authorization: string | null;
  event: string | null;
  /** A task or human-input webhook's task_id and output (the crew webhook has neither). */
  body: { task_id: string; output: string; execution_id?: string };
}
export interface Answer {
  code: number;
  body: Record<string, unknown>;
}
/** What the Python client saw. */
export interface AmpReport {
  kickoff_id: string;
  first_wait: Hook;
  status_while_waiting: unknown;
  revise: Answer;
  second_wait: Hook;
  approve: Answer;
  again: Answer;
  final_status: { status: string; result: { tasks: { output: string }[] } };
  webhooks: Hook[];
}

/**
 * Runs the client with a crew's base URL (`…/crews/<crew>`: AMP's URLs are the crew's own) and an org token; its
 * webhook server listens on `host` (what the controller reaches).
 */
export function runAmpClient(baseUrl: string, token: string, host = "127.0.0.1"): Promise<AmpReport> {
  const script = join(repoRoot, "test/support/amp_hitl_client.py");
  const child = spawn("python3", [script, baseUrl, token, WEBHOOK_TOKEN, FEEDBACK, host]);
  let out = "";
  let err = "";
  child.stdout.on("data", (c: Buffer) => (out += c.toString()));
  child.stderr.on("data", (c: Buffer) => (err += c.toString()));
  return new Promise((resolve, reject) =>
    child.on("close", (code) =>
      code === 0
        ? resolve(JSON.parse(out) as AmpReport)
        : reject(new Error(`the AMP client exited ${code}: ${err}${out}`)),
    ),
  );
}

/** What the client must have seen: the wait, a revision told the feedback, its approval, completed, the webhooks. */
export function expectAmpRun(report: AmpReport): void {
  const id = report.kickoff_id;
  // The human-input webhook: the execution id, the task id and its output, with the kickoff's credentials.
  const first = report.first_wait;
  expect(first.authorization).toBe(`Bearer ${WEBHOOK_TOKEN}`);
  expect(first.event).toBe("human_input");
  expect(first.body).toMatchObject({ execution_id: id, task_id: "draft" });
  expect(first.body.output).toContain("Draft a post on tide pools");
  // /status keeps the running shape and says what waits.
  expect(report.status_while_waiting).toEqual({
    status: "running",
    state: "RUNNING",
    current_task: "draft",
    progress: { completed_tasks: 0, total_tasks: 2 },
    pending_human_input: { task_id: "draft", output: first.body.output, requested_at: expect.any(String) },
  });
  expect(report.revise).toEqual({ code: 200, body: { status: "retrying", message: expect.any(String) } });

  // The revision was told its earlier answer and the feedback.
  const second = report.second_wait;
  expect(second.body.task_id).toBe("draft");
  expect(second.body.output).toContain(FEEDBACK);
  expect(second.body.output).toContain(first.body.output.split("\n")[0]);
  expect(report.approve).toEqual({ code: 200, body: { status: "resumed", message: expect.any(String) } });
  expect(report.again).toEqual({
    code: 400,
    body: { error: "Bad Request", message: "Execution is not in pending human input state" },
  });

  // Completed: the approved revision is the task's output, and the next task had it with the person's note.
  const final = report.final_status;
  expect(final.status).toBe("completed");
  const [draft, publish] = final.result.tasks as [{ output: string }, { output: string }];
  expect(draft.output).toBe(second.body.output);
  expect(publish.output).toContain(second.body.output.split("\n")[0]);
  expect(publish.output).toContain(APPROVAL_NOTE);

  // The task webhook went out with each answer that waited, and once for the next task; only the human-input webhook
  // carried the credentials.
  const hooks = report.webhooks;
  const taskHooks = hooks.filter((h) => h.path === "/task").map((h) => [h.body.task_id, h.body.output]);
  expect(taskHooks).toEqual([
    ["draft", first.body.output],
    ["draft", second.body.output],
    ["publish", publish.output],
  ]);
  expect(hooks.filter((h) => h.path === "/hitl")).toHaveLength(2);
  expect(hooks.filter((h) => h.path !== "/hitl").every((h) => h.authorization === null)).toBe(true);
}
