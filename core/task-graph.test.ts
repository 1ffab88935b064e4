import { describe, expect, it } from "vitest";
import { crewSpec } from "./crew-resource.ts";
import { contextTaskNames, taskDependencies } from "./task-graph.ts";

/** A crew of tasks named by letters; `async` names the asynchronous ones, `context` gives tasks their lists. */
function crewOf(names: string, async = "", context: Record<string, string[]> = {}) {
  return crewSpec.parse({
    agents: [{ name: "a", role: "R", goal: "G" }],
    tasks: [...names].map((n) => ({
      name: n,
      agent: "a",
      description: n,
      expectedOutput: n,
      asyncExecution: async.includes(n),
      ...(context[n] ? { context: context[n] } : {}),
    })),
  });
}

/** The dependencies by task name, as a compact map: `{ c: "ab" }`. */
function dependencies(spec: ReturnType<typeof crewOf>): Record<string, string> {
  const deps = taskDependencies(spec);
  return Object.fromEntries(spec.tasks.map((t, i) => [t.name, deps[i]!.map((j) => spec.tasks[j]!.name).join("")]));
}

describe("taskDependencies", () => {
  it("chains synchronous tasks: each waits for the one before", () => {
    expect(dependencies(crewOf("abc"))).toEqual({ a: "", b: "a", c: "b" });
  });

  it("starts consecutive asynchronous tasks together and makes the next synchronous task wait for all of them", () => {
    expect(dependencies(crewOf("abcd", "abc"))).toEqual({ a: "", b: "", c: "", d: "abc" });
  });

  it("starts asynchronous tasks after the synchronous task before them, not after each other", () => {
    expect(dependencies(crewOf("sabjt", "ab"))).toEqual({ s: "", a: "s", b: "s", j: "sab", t: "j" });
  });

  it("lets a last asynchronous task start beside nothing but wait for the synchronous task before it", () => {
    expect(dependencies(crewOf("abc", "c"))).toEqual({ a: "", b: "a", c: "b" });
  });

  it("adds the context tasks, which CrewAI's order already puts first", () => {
    expect(dependencies(crewOf("sabj", "ab", { b: ["s"], j: ["a"] }))).toEqual({ s: "", a: "s", b: "s", j: "sab" });
    // An asynchronous task taking context from an asynchronous task of an earlier run: it is done already.
    expect(dependencies(crewOf("abjc", "abc", { c: ["a"] }))).toEqual({ a: "", b: "", j: "ab", c: "aj" });
  });
});

describe("contextTaskNames", () => {
  it("gives a synchronous task without a context list every earlier task, asynchronous ones included", () => {
    const spec = crewOf("sabj", "ab");
    expect(contextTaskNames(spec, 0)).toEqual([]);
    expect(contextTaskNames(spec, 3)).toEqual(["s", "a", "b"]);
  });

  it("gives an asynchronous task without a context list nothing, as CrewAI does on a kickoff", () => {
    const spec = crewOf("sabj", "ab");
    expect(contextTaskNames(spec, 1)).toEqual([]);
    expect(contextTaskNames(spec, 2)).toEqual([]);
  });

  it("gives a task with a context list exactly those tasks, in the list's order, or none for an empty list", () => {
    const spec = crewOf("sabj", "ab", { a: ["s"], j: ["b", "a"], b: [] });
    expect(contextTaskNames(spec, 1)).toEqual(["s"]);
    expect(contextTaskNames(spec, 2)).toEqual([]);
    expect(contextTaskNames(spec, 3)).toEqual(["b", "a"]);
  });
});
