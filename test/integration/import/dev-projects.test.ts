import { cp, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { MemoryTokenStore } from "../../../api/auth/memory-token-store.ts";
import { silentLogger } from "../../../core/logger.ts";
import { devConfigSchema } from "../../../dev/config.ts";
import { startDev, type RunningDev } from "../../../dev/start.ts";
import { crewYaml } from "../../support/dev-server.ts";
import { waitFor } from "../../support/wait-for.ts";
import { createCrewAIProject, renderJsonCrewTemplate, templateCrew } from "./crewai.ts";

/**
 * `kubecrew dev` runs CrewAI's projects as they are, from KUBECREW_CREWS_DIR: the project `crewai create crew
 * --classic` writes (KUBECREW_CREWS_DIR its own folder, as `npm start` there), a JSON-first project from the package's
 * json_crew templates and the asynchronous fixture, side by side in one folder — each through /kickoff and /status
 * on the mock provider; and the inline definition with a structured output, guardrails and a person's approval. Its
 * `echo` model answers with the prompt it was given, so each output shows the context a task received.
 */

const token = "kco_import-test-org-token-000000000";
let dev: RunningDev | undefined;
let classic: string;
afterEach(async () => {
  await dev?.stop();
  dev = undefined;
});

beforeAll(async () => {
  classic = (await createCrewAIProject("market_digest", "classic")).project;
}, 180_000);

async function startIn(crewsDir: string): Promise<RunningDev> {
  const tokens = new MemoryTokenStore();
  tokens.add(token, { kind: "org", crews: "*", subject: "org" });
  const config = devConfigSchema.parse({
    PORT: "0",
    KUBECREW_CREWS_DIR: crewsDir,
    KUBECREW_LLM_PROVIDER: "mock",
    KUBECREW_LLM_MODEL: "echo",
  });
  dev = await startDev(config, silentLogger(), { tokens });
  return dev;
}

interface Status {
  status: string;
  error?: string;
  result?: { output: string; tasks: { task_id: string; output: string; agent: string; json_dict?: unknown }[] };
  pending_human_input?: { task_id: string; output: string };
}

async function call<T>(path: string, body?: unknown): Promise<{ status: number; body: T }> {
  const res = await fetch(`${dev!.url}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as T };
}

async function run(crew: string, inputs: Record<string, string>): Promise<Status> {
  const kickoff = await call<{ kickoff_id: string }>(`/crews/${crew}/kickoff`, { inputs });
  expect(kickoff.status).toBe(200);
  return waitFor(
    async () => {
      const s = await call<Status>(`/crews/${crew}/status/${kickoff.body.kickoff_id}`);
      return s.body.status === "running" ? undefined : s.body;
    },
    90_000,
    250,
  );
}

describe("kubecrew dev with CrewAI projects in KUBECREW_CREWS_DIR", () => {
  it("runs the project `crewai create crew --classic` writes, from its own folder (npm start there)", async () => {
    const running = await startIn(classic);
    expect(running.crews.map((c) => c.metadata.name)).toEqual(["market-digest"]);
    expect(running.defaultCrew).toBe("market-digest");
    // Its placeholders are its inputs; the root paths serve it as the default crew.
    expect((await call<{ inputs: string[] }>("/inputs")).body.inputs).toEqual(["topic", "current_year"]);
    expect((await call<{ error: string }>("/kickoff", { inputs: { topic: "tides" } })).status).toBe(422);

    const status = await run("market-digest", { topic: "tides", current_year: "2031" });
    expect(status.error).toBeUndefined();
    expect(status.status).toBe("completed");
    const [research, report] = status.result!.tasks;
    expect(status.result!.tasks.map((t) => t.task_id)).toEqual(["research_task", "reporting_task"]);
    expect(research!.output).toContain("Conduct a thorough research about tides");
    expect(research!.output).toContain("2031");
    // A task without context gets every earlier output, as CrewAI's sequential process gives it.
    expect(report!.output).toContain(research!.output.split("\n").find((l) => l.includes("thorough research"))!);
  }, 180_000);

  it("runs a JSON-first project from the json_crew templates and the asynchronous fixture, beside a manifest", async () => {
    const dir = await mkdtemp(join(tmpdir(), "kubecrew-crewai-dev-"));
    await renderJsonCrewTemplate(
      join(dir, "brief_desk"),
      "brief_desk",
      templateCrew.agents,
      templateCrew.tasks,
      templateCrew.inputs,
    );
    await cp(join(import.meta.dirname, "fixtures/research-brief"), join(dir, "research-brief"), { recursive: true });
    await writeFile(join(dir, "notes.yaml"), crewYaml("notes", "echo", { tasks: 1 }));
    const running = await startIn(dir);
    expect(running.crews.map((c) => c.metadata.name)).toEqual(["notes", "brief-desk", "research-brief"]);

    // An input with a default (CrewAI's inputs) is optional; the others are required.
    expect((await call<{ inputs: string[] }>("/crews/brief-desk/inputs")).body.inputs).toEqual(["audience", "topic"]);
    const desk = await run("brief-desk", { topic: "tides" });
    expect(desk.status).toBe("completed");
    const [analysis, edit] = desk.result!.tasks;
    expect(edit!.output).toContain("Edit the analysis of tides for managers.");
    expect(edit!.output).toContain(analysis!.output.split("\n").find((l) => l.includes("Analyse tides."))!);

    const brief = await run("research-brief", { topic: "tides" });
    expect(brief.status).toBe("completed");
    const outputs = Object.fromEntries(brief.result!.tasks.map((t) => [t.task_id, t.output]));
    expect(Object.keys(outputs)).toEqual(["market_scan", "tech_scan", "brief"]);
    // The brief gets exactly its two context tasks' outputs.
    expect(outputs.brief).toContain("Scan the market for tides: who sells what, to whom.");
    expect(outputs.brief).toContain("Scan the technology behind tides.");
    expect(outputs.brief).toContain("for engineers");
  }, 240_000);

  it("runs the inline release-check definition: its object as json_dict and context, each guardrail a passed step", async () => {
    const dir = await mkdtemp(join(tmpdir(), "kubecrew-crewai-release-"));
    const fixture = await readFile(join(import.meta.dirname, "fixtures/release-check.yaml"), "utf8");
    // Offline: the one model the fixture names (the auditor's) is left out, so every agent runs on the mock provider.
    const auditorModel = "    llm: openai/gpt-4o-mini\n";
    expect(fixture).toContain(auditorModel);
    await writeFile(join(dir, "release-check.yaml"), fixture.replace(auditorModel, ""));
    await startIn(dir);
    expect((await call<{ inputs: string[] }>("/crews/release-check/inputs")).body.inputs).toEqual([
      "version",
      "product",
    ]);

    const kickoff = await call<{ kickoff_id: string }>("/crews/release-check/kickoff", {
      inputs: { product: "Tidal" },
    });
    expect(kickoff.status).toBe(200);
    const id = kickoff.body.kickoff_id;
    const status = () => call<Status>(`/crews/release-check/status/${id}`).then((r) => r.body);
    // notes (human_input) waits for a person with its answer; the approval ends the run.
    const waiting = await waitFor(async () => {
      const s = await status();
      return s.pending_human_input || s.status !== "running" ? s : undefined;
    }, 90_000);
    expect(waiting.error).toBeUndefined();
    expect(waiting.pending_human_input?.task_id).toBe("notes");
    const approve = { execution_id: id, task_id: "notes", human_feedback: "", is_approve: true };
    expect((await call("/crews/release-check/resume", approve)).status).toBe(200);
    const final = await waitFor(async () => {
      const s = await status();
      return s.status === "running" ? undefined : s;
    }, 90_000);
    expect(final.error).toBeUndefined();
    expect(final.status).toBe("completed");

    const [checklist, notes] = final.result!.tasks;
    expect(final.result!.tasks.map((t) => t.task_id)).toEqual(["checklist", "notes"]);
    // output_json: the object made up from the schema (required fields), its JSON text the task's output.
    const verdict = { ready: false, blockers: [] };
    expect(checklist).toMatchObject({ agent: "Release auditor", json_dict: verdict, output: JSON.stringify(verdict) });
    expect(notes!.json_dict).toBeUndefined();
    // notes' context is checklist's object; its prompt the fixture's placeholders filled in (the default version).
    expect(notes!.output).toContain(`--- Result of "checklist" ---\n${JSON.stringify(verdict)}`);
    expect(notes!.output).toContain("Write the release notes of Tidal 1.0.");

    const checks = await guardrailSteps(id);
    expect(checks).toEqual({
      checklist: [
        { input: "outputJson", output: "passed" },
        { input: "llm: Every blocker names the component it is in.", output: "passed" },
      ],
      notes: [
        { input: "llm: Mention every blocker the checklist found.", output: "passed" },
        { input: "llm: Stay under 300 words.", output: "passed" },
      ],
    });
  }, 180_000);
});

/** Each task's guardrail steps from the event stream, in order: the check made and its outcome. */
async function guardrailSteps(
  id: string,
): Promise<Record<string, { input?: string; output?: string; error?: string }[]>> {
  const res = await fetch(`${dev!.url}/crews/release-check/status/${id}/events`, {
    headers: { authorization: `Bearer ${token}` },
  });
  const byTask: Record<string, { input?: string; output?: string; error?: string }[]> = {};
  for (const frame of (await res.text()).split("\n\n")) {
    if (!frame.includes("event: step")) continue;
    const data = JSON.parse(frame.split("\ndata: ")[1]!) as {
      task_id: string;
      step: { kind: string; input?: string; output?: string; error?: string };
    };
    if (data.step.kind !== "guardrail") continue;
    const { input, output, error } = data.step;
    (byTask[data.task_id] ??= []).push({ input, output, ...(error !== undefined ? { error } : {}) });
  }
  return byTask;
}
