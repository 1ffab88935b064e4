import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { buildAssignment } from "../core/assignment.ts";
import { crew } from "../core/crew-resource.ts";
import { executionSpec } from "../core/execution.ts";
import type { TaskResultSpec } from "../core/task-result.ts";
import { buildTaskPrompt, type TaskPrompt } from "./prompt.ts";
import { testAssignment } from "./test-assignment.ts";

const both = ({ system, user }: TaskPrompt) => `${system}\n${user}`;

describe("buildTaskPrompt: what the agent is told", () => {
  it("tells the agent its role, goal and backstory, and the rest only in the task message", () => {
    const { system, user } = buildTaskPrompt(testAssignment());
    expect(system).toContain("Senior Writer");
    expect(system).toContain("Explain AI agents clearly");
    expect(system).toContain("You have written for technical magazines for ten years.");
    expect(system).not.toContain("Write a short article about AI agents.");
    expect(user).not.toContain("Senior Writer");
  });

  it("leaves the backstory's place out when the agent has none", () => {
    const a = testAssignment();
    const withBackstory = buildTaskPrompt(a).system;
    const without = buildTaskPrompt({ ...a, agent: { ...a.agent, backstory: "  " } }).system;
    expect(without).toContain("Senior Writer");
    expect(without).toContain("Explain AI agents clearly");
    expect(without.split("\n").length).toBe(withBackstory.split("\n").length - 1);
    expect(without).not.toMatch(/: *\n|: *$/m);
  });

  it("gives the task's description first and its expected output after it", () => {
    const { user } = buildTaskPrompt(testAssignment({ context: [] }));
    const description = user.indexOf("Write a short article about AI agents.");
    const expected = user.indexOf("Three paragraphs in markdown.");
    expect(description).toBeGreaterThanOrEqual(0);
    expect(description).toBeLessThan(user.indexOf("\n"));
    expect(expected).toBeGreaterThan(description);
  });

  it("hands on the earlier tasks' outputs in order, each under its task's name, after the task", () => {
    const { user } = buildTaskPrompt(
      testAssignment({
        context: [
          { task: "research", output: "first output\nwith a second line" },
          { task: "outline", output: "second output" },
        ],
      }),
    );
    const at = (text: string) => user.indexOf(text);
    expect(at("research")).toBeGreaterThan(at("Three paragraphs in markdown."));
    expect(at("first output\nwith a second line")).toBeGreaterThan(at("research"));
    expect(at("outline")).toBeGreaterThan(at("first output\nwith a second line"));
    expect(at("second output")).toBeGreaterThan(at("outline"));
  });

  it("says nothing of earlier tasks when there are none", () => {
    const withContext = buildTaskPrompt(testAssignment()).user;
    const without = buildTaskPrompt(testAssignment({ context: [] })).user;
    expect(withContext).toContain("Agents plan, act and observe.");
    // The whole context part goes: what is left is the other message less that part.
    const contextPart = withContext.length - without.length;
    expect(contextPart).toBeGreaterThan("Agents plan, act and observe.".length);
    expect(without).not.toContain("research");
  });

  it("asks for the finished work, after everything else", () => {
    const { user } = buildTaskPrompt(testAssignment());
    const last = user.split("\n\n").at(-1)!;
    expect(last).not.toContain("Agents plan, act and observe.");
    expect(last).not.toContain("Three paragraphs in markdown.");
    expect(last.length).toBeGreaterThan(20);
  });

  it("gives a revision the earlier answer and the person's request, before the closing request", () => {
    const a = testAssignment({ context: [] });
    const review = { previousOutput: "A long, dull article.", feedback: "Shorter, and name two real agents." };
    const { user } = buildTaskPrompt({ ...a, task: { ...a.task, revision: 1, review } });
    const at = (text: string) => user.indexOf(text);
    expect(at("A long, dull article.")).toBeGreaterThan(at("Three paragraphs in markdown."));
    expect(at("Shorter, and name two real agents.")).toBeGreaterThan(at("A long, dull article."));
    expect(user.split("\n\n").at(-1)).not.toContain("Shorter");
    // The first answer's prompt says nothing of a review.
    expect(buildTaskPrompt(a).user).not.toContain("revision");
  });

  it("hands on what the person who approved an earlier result said of it, with that result", () => {
    const { user } = buildTaskPrompt(
      testAssignment({ context: [{ task: "research", output: "the facts", note: "Trust the second source" }] }),
    );
    expect(user.indexOf("Trust the second source")).toBeGreaterThan(user.indexOf("the facts"));
  });

  it("keeps braces in texts as they are (interpolation happened before)", () => {
    const a = testAssignment();
    const { user } = buildTaskPrompt({ ...a, task: { ...a.task, description: 'Answer as JSON: {"title": "..."}' } });
    expect(user).toContain('Answer as JSON: {"title": "..."}');
  });
});

describe("the prompts of the example crew", () => {
  const example = crew.parse(
    parse(readFileSync(join(import.meta.dirname, "..", "examples", "research-crew.yaml"), "utf8")),
  );
  const result = (output: string) => ({ results: [{ output } as TaskResultSpec] });
  const prompt = (index: number) =>
    buildTaskPrompt(
      buildAssignment(
        {
          execution: {
            name: "0b7e8a52-5d6c-4f1e-9a3b-2c1d0e9f8a7b",
            spec: executionSpec.parse({ crewRef: { name: "research" }, inputs: { topic: "tide pools" } }),
          },
          crew: example.spec,
          observed: { research: result("Ten facts about tide pools."), analysis: result("Three findings.") },
          now: new Date("2026-11-26T12:00:00Z"),
        },
        example.spec,
        index,
      ),
    );

  it("carry the kickoff's inputs, filled into every text, with no placeholder left", () => {
    const { system, user } = prompt(0);
    expect(system).toContain("tide pools Senior Data Researcher");
    expect(system).toContain("Uncover cutting-edge developments in tide pools");
    expect(system).toContain("the latest developments in tide pools");
    expect(user).toContain("Conduct thorough research about tide pools.");
    expect(user).toContain("the most relevant information about tide pools");
    expect(both(prompt(0))).not.toMatch(/\{topic\}/);
  });

  it("give the last task what the earlier ones produced", () => {
    const { user } = prompt(2);
    expect(user).toContain("Write a short report on tide pools");
    expect(user).toContain("Ten facts about tide pools.");
    expect(user).toContain("Three findings.");
  });
});

/**
 * CrewAI's own prompt texts (its translations file), read from an installed `crewai` package: a virtual environment
 * under the kubecrew cache, or the Python on PATH. Undefined when none is installed.
 */
function installedCrewAiTexts(): { source: string; texts: string[] } | undefined {
  const file = crewAiTranslationsFile();
  if (!file) return undefined;
  const texts: string[] = [];
  const collect = (value: unknown): void => {
    if (typeof value === "string") texts.push(value);
    else if (value && typeof value === "object") Object.values(value).forEach(collect);
  };
  collect(JSON.parse(readFileSync(file, "utf8")));
  return { source: `the installed crewai package, ${file}`, texts };
}

function crewAiTranslationsFile(): string | undefined {
  const caches = [
    process.env.KUBECREW_CACHE,
    join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "kubecrew"),
  ].filter((dir): dir is string => Boolean(dir) && existsSync(dir!));
  for (const cache of caches) {
    const found = findSitePackagesFile(cache, 3);
    if (found) return found;
  }
  const python = spawnSync(
    "python3",
    [
      "-c",
      "import importlib.util as u; s = u.find_spec('crewai'); print(s.submodule_search_locations[0] if s else '')",
    ],
    { encoding: "utf8", timeout: 15_000 },
  );
  const dir = python.status === 0 ? python.stdout.trim() : "";
  const file = dir && join(dir, "translations", "en.json");
  return file && existsSync(file) ? file : undefined;
}

/** `<venv>/lib/python3.x/site-packages/crewai/translations/en.json` in a virtual environment at most `depth` below. */
function findSitePackagesFile(dir: string, depth: number): string | undefined {
  const lib = join(dir, "lib");
  if (existsSync(lib)) {
    for (const python of readdirSync(lib).filter((name) => name.startsWith("python"))) {
      const file = join(lib, python, "site-packages", "crewai", "translations", "en.json");
      if (existsSync(file)) return file;
    }
  }
  if (depth === 0) return undefined;
  let children: string[];
  try {
    children = readdirSync(dir, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => join(dir, entry.name));
  } catch {
    return undefined;
  }
  for (const child of children) {
    const found = findSitePackagesFile(child, depth - 1);
    if (found) return found;
  }
  return undefined;
}

/**
 * Sentences of CrewAI's agent prompts, this test's own short list: checked always, and the only list when no crewai
 * package is installed (so the check never passes for want of a package).
 */
const CREWAI_PHRASES = [
  "Your personal goal is",
  "Current Task",
  "Begin! This is VERY important to you",
  "your job depends on it",
  "give your best Final Answer",
  "This is the expected criteria for your final answer",
  "you MUST return the actual complete content as the final answer",
  "not a summary",
  "This is the context you're working with",
  "I now can give a great answer",
];

const normalise = (text: string) => text.replace(/\s+/g, " ").trim().toLowerCase();

/** The sentences and clauses of CrewAI's texts of three words or more, placeholders taken out. */
function phrasesOf(texts: string[]): string[] {
  const phrases = texts.flatMap((text) =>
    text
      .split(/\{[^{}]*\}|[.!?:;,]\s|\n/)
      .map((part) => normalise(part).replace(/^[\s.!?:;,]+|[\s.!?:;,]+$/g, ""))
      .filter((part) => part.split(" ").length >= 3),
  );
  return [...new Set(phrases)];
}

describe("the prompts are kubecrew's own words", () => {
  const installed = installedCrewAiTexts();
  const source = installed ? installed.source : "this test's list: no crewai package is installed";
  const phrases = [...new Set([...CREWAI_PHRASES.map(normalise), ...phrasesOf(installed?.texts ?? [])])];
  const a = testAssignment({
    context: [
      { task: "research", output: "first output" },
      { task: "outline", output: "second output" },
    ],
  });
  const revision = {
    ...a,
    context: [{ task: "research", output: "first output", note: "good" }],
    task: { ...a.task, revision: 1, review: { previousOutput: "before", feedback: "shorter" } },
  };
  const prompts = [a, { ...a, context: [] }, { ...a, agent: { ...a.agent, backstory: "" } }, revision].map((x) =>
    normalise(both(buildTaskPrompt(x))),
  );

  it(`use none of CrewAI's prompt sentences (from ${source})`, () => {
    expect(phrases.length).toBeGreaterThanOrEqual(installed ? 100 : CREWAI_PHRASES.length);
    for (const text of prompts) expect(phrases.filter((phrase) => text.includes(phrase))).toEqual([]);
  });
});
