import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { kickoffResponse, statusResponse, stopResponse } from "../../../core/api-bodies.ts";
import { executionEventBody } from "../../../core/execution-event-bodies.ts";
import { executionsResponse } from "../../../api/routes/listing-bodies.ts";
import type { RunningDev } from "../../../dev/start.ts";
import { crewYaml, startTestDev, tokens, waitFor } from "../../support/dev-server.ts";
import { cli, emptyHome } from "./support.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

// status, list, logs and stop against a real `kubecrew dev`; with --output json|yaml each body is the API's own.
describe("kubecrew status, list, logs, stop", { timeout: 60_000 }, () => {
  let dev: RunningDev;
  let env: Record<string, string>;
  let finished: string;

  const api = async (path: string, token = tokens.org) => {
    const res = await fetch(`${dev.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
    return (await res.json()) as unknown;
  };
  const json = (stdout: string) =>
    stdout
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as unknown);

  beforeAll(async () => {
    dev = await startTestDev({ "slow.yaml": crewYaml("slow", "sleep-3000", { tasks: 2 }) });
    env = { KUBECREW_URL: dev.url, KUBECREW_TOKEN: tokens.org };
    // A run of the default crew (research) started at the root /kickoff, its inputs from a file.
    const inputs = join(emptyHome(), "inputs.json");
    writeFileSync(inputs, JSON.stringify({ topic: "tides" }));
    const run = await cli(["run", "--inputs-file", inputs], env);
    expect(run.code).toBe(0);
    expect(run.stdout.trimEnd()).toMatch(UUID);
    finished = run.stdout.trim();
    await waitFor(async () => {
      const status = statusResponse.parse(await api(`/crews/research/status/${finished}`));
      return status.status === "running" ? undefined : status;
    }, 25_000);
  }, 60_000);
  afterAll(() => dev?.stop());

  it("status: the run's tasks and output as text; -o json and -o yaml are the API's body", async () => {
    const text = await cli(["status", finished], env);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^Crew: +research$/m);
    expect(text.stdout).toMatch(/^Status: +completed$/m);
    for (const task of ["research", "analysis", "report"])
      expect(text.stdout).toMatch(new RegExp(`^  ✓ ${task} · `, "m"));
    const body = await api(`/crews/research/status/${finished}`);
    const asJson = await cli(["status", finished, "-o", "json"], env);
    expect(json(asJson.stdout)).toEqual([body]);
    expect(statusResponse.safeParse(json(asJson.stdout)[0]).success).toBe(true);
    const asYaml = await cli(["status", finished, "--crew", "research", "--output", "yaml"], env);
    expect(parseYaml(asYaml.stdout)).toEqual(body);
  });

  it("list: every crew's runs as a table; --crew -o json is the API's body", async () => {
    const text = await cli(["list"], env);
    expect(text.code).toBe(0);
    expect(text.stdout.split("\n")[0]).toMatch(/^KICKOFF_ID +CREW +STATUS +PROGRESS/);
    expect(text.stdout).toMatch(new RegExp(`^${finished} +research +completed +3/3 `, "m"));
    const one = await cli(["list", "--crew", "research", "-o", "json"], env);
    const [listed] = json(one.stdout);
    expect(listed).toEqual(await api("/crews/research/executions"));
    expect(executionsResponse.parse(listed).executions.map((e) => e.kickoff_id)).toContain(finished);
    const every = await cli(["list", "-o", "json"], env);
    const { executions } = json(every.stdout)[0] as { executions: { crew: string; kickoff_id: string }[] };
    expect(executions.find((e) => e.kickoff_id === finished)?.crew).toBe("research");
    for (const e of executions) expect(executionsResponse.shape.executions.element.safeParse(e).success).toBe(true);
  });

  it("logs: each task's steps with their texts; -o json is the event stream's bodies, one a line", async () => {
    const text = await cli(["logs", finished], env);
    expect(text.code).toBe(0);
    for (const task of ["research", "analysis", "report"]) {
      expect(text.stdout).toMatch(new RegExp(`^${task} started `, "m"));
      expect(text.stdout).toContain(`[mock llm] Answer to task "${task}"`);
    }
    expect(text.stdout.match(/^ {2}step 0 · LLM turn · /gm)).toHaveLength(3);
    expect(text.stdout).toMatch(/^Run completed in /m);
    const events = json((await cli(["logs", finished, "-o", "json"], env)).stdout);
    expect(events.map((e) => executionEventBody.parse(e).event)).toEqual([
      ...["research", "analysis", "report"].flatMap(() => ["task_started", "step", "task_completed"]),
      "execution_completed",
    ]);
  });

  it("logs of a running run: the events so far, then it exits; --follow follows the run to its end", async () => {
    const id = (await cli(["run", "slow", "-i", "topic=tides"], env)).stdout.trim();
    const soFar = await cli(["logs", id], env);
    expect(soFar.code).toBe(0);
    expect(soFar.stdout).not.toMatch(/^Run completed/m);
    expect(statusResponse.parse(await api(`/crews/slow/status/${id}`)).status).toBe("running");
    const followed = await cli(["logs", id, "--follow"], env);
    expect(followed.code).toBe(0);
    expect(followed.stdout).toMatch(/^step1 started [^]*^step2 started [^]*^Run completed in /m);
  });

  it("run -o json prints the kickoff body; stop stops it, and a second stop is one line and exit 1", async () => {
    const run = await cli(["run", "slow", "-i", "topic=tides", "-o", "json"], env);
    const { kickoff_id: id } = kickoffResponse.parse(json(run.stdout)[0]);
    const stop = await cli(["stop", id, "-o", "json"], env);
    expect(stop.code).toBe(0);
    expect(stopResponse.parse(json(stop.stdout)[0])).toEqual({ kickoff_id: id, status: "stopping" });
    const stopped = await waitFor(async () => {
      const status = statusResponse.parse(await api(`/crews/slow/status/${id}`));
      return status.status === "running" ? undefined : status;
    });
    expect(stopped).toMatchObject({ status: "error", error: "Execution stopped" });
    expect((await cli(["status", id], env)).stdout).toMatch(/^Status: +stopped$/m);
    const again = await cli(["stop", id, "--crew", "slow"], env);
    expect(again.code).toBe(1);
    expect(again.stderr).toBe(`kubecrew stop: Execution ${id} has already finished (Stopped) (400)\n`);
  });

  it("a run without its inputs, or an unknown ID: one line naming the problem, exit 1", async () => {
    const missing = await cli(["run", "research"], env);
    expect(missing).toMatchObject({ code: 1, stdout: "" });
    expect(missing.stderr).toBe("kubecrew run: Missing required inputs: topic (422): pass -i topic=…\n");
    const unknown = "00000000-0000-4000-8000-000000000000";
    const status = await cli(["status", unknown], env);
    expect(status.code).toBe(1);
    expect(status.stderr).toMatch(new RegExp(`^kubecrew status: no execution with ID ${unknown} in the crews .*\\n$`));
    const logs = await cli(["logs", unknown, "--crew", "research"], env);
    expect(logs.stderr).toBe(`kubecrew logs: No execution found with ID: ${unknown} (404)\n`);
  });

  it("a user token sees only the runs it started", async () => {
    const aliceEnv = { ...env, KUBECREW_TOKEN: tokens.alice };
    const mine = (await cli(["run", "research", "-i", "topic=tides"], aliceEnv)).stdout.trim();
    const listed = json((await cli(["list", "--crew", "research", "-o", "json"], aliceEnv)).stdout)[0];
    expect(executionsResponse.parse(listed).executions.map((e) => e.kickoff_id)).toEqual([mine]);
    const other = await cli(["status", finished], aliceEnv);
    expect(other.code).toBe(1);
    expect(other.stderr).toMatch(/no execution with ID/);
  });
});
