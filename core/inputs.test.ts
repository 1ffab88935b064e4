import { describe, expect, it } from "vitest";
import type { CrewSpec } from "./crew.ts";
import { crewSpec } from "./crew-resource.ts";
import { discoverInputs, interpolate, placeholdersIn, resolveInputs } from "./inputs.ts";

/** A one-agent, one-task crew whose texts are given; everything else minimal. */
function crewWith(texts: {
  description?: string;
  expectedOutput?: string;
  role?: string;
  goal?: string;
  backstory?: string;
  inputs?: unknown[];
  moreTasks?: { description: string; expectedOutput: string }[];
}): CrewSpec {
  return crewSpec.parse({
    inputs: texts.inputs ?? [],
    agents: [
      { name: "writer", role: texts.role ?? "Writer", goal: texts.goal ?? "Write", backstory: texts.backstory ?? "" },
    ],
    tasks: [
      {
        name: "first",
        agent: "writer",
        description: texts.description ?? "Do it",
        expectedOutput: texts.expectedOutput ?? "Done",
      },
      ...(texts.moreTasks ?? []).map((t, i) => ({ name: `more_${i}`, agent: "writer", ...t })),
    ],
  });
}

describe("placeholdersIn", () => {
  it.each([
    ["{topic}", ["topic"]],
    ["{_private}", ["_private"]],
    ["{Topic2}", ["Topic2"]],
    ["{current-year}", ["current-year"]],
    ["{a_b-c9}", ["a_b-c9"]],
    ["{a}{b}", ["a", "b"]],
    ["about {topic} in {year} and {topic} again", ["topic", "year", "topic"]],
  ])("finds the placeholders in %j", (text, names) => {
    expect(placeholdersIn(text)).toEqual(names);
  });

  it.each([
    ['{"a": 1}'],
    ['Answer as JSON: {"topic": "x", "score": 3}'],
    ["{ x }"],
    ["{ x}"],
    ["{x }"],
    ["{1abc}"],
    ["{-abc}"],
    ["{}"],
    ["{{"],
    ["}}"],
    ["{a.b}"],
    ["{a b}"],
    ["{a:b}"],
    ["{é}"],
    ["{topic"],
    ["topic}"],
    ["function f() { return {}; }"],
  ])("leaves other braces alone: %j", (text) => {
    expect(placeholdersIn(text)).toEqual([]);
  });

  it("finds the name inside doubled braces, as CrewAI does", () => {
    expect(placeholdersIn("{{topic}}")).toEqual(["topic"]);
  });
});

describe("interpolate", () => {
  it("replaces every occurrence of a placeholder", () => {
    expect(interpolate("{topic}: all about {topic}", { topic: "AI" })).toBe("AI: all about AI");
  });

  it("replaces several different placeholders", () => {
    expect(interpolate("{greeting}, {name}!", { greeting: "Hello", name: "Ada" })).toBe("Hello, Ada!");
  });

  it("renders numbers and booleans as text", () => {
    expect(interpolate("{n} items, {pi}, {neg}, {yes}/{no}", { n: 3, pi: 3.14, neg: -2, yes: true, no: false })).toBe(
      "3 items, 3.14, -2, true/false",
    );
  });

  it("renders zero, empty string and null values instead of leaving the placeholder", () => {
    expect(interpolate("[{zero}][{empty}][{nothing}]", { zero: 0, empty: "", nothing: null })).toBe("[0][][null]");
  });

  it("renders objects and arrays as JSON", () => {
    expect(interpolate("filters: {filters}", { filters: { lang: "en", max: 3, tags: ["a", "b"] } })).toBe(
      'filters: {"lang":"en","max":3,"tags":["a","b"]}',
    );
    expect(interpolate("list: {items}", { items: [1, "two", { three: 3 }, null] })).toBe(
      'list: [1,"two",{"three":3},null]',
    );
    expect(interpolate("{empty_obj}{empty_arr}", { empty_obj: {}, empty_arr: [] })).toBe("{}[]");
  });

  it("leaves JSON and other braces in the text untouched", () => {
    const text = 'Reply with {"topic": "{topic}", "n": 1} and { topic } and {1abc} and {{ and }} and {}';
    expect(interpolate(text, { topic: "AI", "1abc": "no" })).toBe(
      'Reply with {"topic": "AI", "n": 1} and { topic } and {1abc} and {{ and }} and {}',
    );
  });

  it("keeps the outer braces of a doubled placeholder, as CrewAI does", () => {
    expect(interpolate("{{topic}}", { topic: "AI" })).toBe("{AI}");
  });

  it("supports names with dashes, underscores and digits", () => {
    expect(interpolate("{current-year} {_x} {v2}", { "current-year": 2026, _x: "x", v2: "two" })).toBe("2026 x two");
  });

  it("leaves a placeholder without a value as it is", () => {
    expect(interpolate("{known} {unknown}", { known: "k" })).toBe("k {unknown}");
  });

  it("does not take inherited object properties for inputs", () => {
    expect(interpolate("{constructor} {toString} {__proto__}", {})).toBe("{constructor} {toString} {__proto__}");
  });

  it("does not interpolate again inside substituted values", () => {
    expect(interpolate("{a}", { a: "{b}", b: "B" })).toBe("{b}");
    expect(interpolate("{a} {b}", { a: "{b}", b: "B" })).toBe("{b} B");
  });

  it("treats replacement patterns in values literally", () => {
    expect(interpolate("cost: {price}", { price: "$& and $1 and $$" })).toBe("cost: $& and $1 and $$");
  });

  it("returns text without placeholders unchanged, with or without inputs", () => {
    expect(interpolate("plain text", {})).toBe("plain text");
    expect(interpolate("", { a: 1 })).toBe("");
  });

  it("is case-sensitive", () => {
    expect(interpolate("{Topic} {topic}", { topic: "t" })).toBe("{Topic} t");
  });
});

describe("discoverInputs", () => {
  it("finds placeholders in task descriptions and expected outputs and in agent role, goal and backstory", () => {
    const spec = crewWith({
      description: "Research {topic}",
      expectedOutput: "A list about {subject}",
      role: "{field} researcher",
      goal: "Know {goal_item}",
      backstory: "Worked in {place}",
    });
    expect(discoverInputs(spec)).toEqual(["topic", "subject", "field", "goal_item", "place"]);
  });

  it("lists tasks' placeholders before agents', in order of appearance", () => {
    const spec = crewWith({
      description: "{b} then {a}",
      expectedOutput: "{c}",
      role: "{d}",
      goal: "{e}",
      backstory: "{f}",
      moreTasks: [{ description: "{g}", expectedOutput: "{h}" }],
    });
    expect(discoverInputs(spec)).toEqual(["b", "a", "c", "g", "h", "d", "e", "f"]);
  });

  it("puts declared inputs first, in their order, then discovered ones, each name once", () => {
    const spec = crewWith({
      inputs: [{ name: "year" }, { name: "topic" }, { name: "unused", required: false }],
      description: "About {topic} in {city}",
      expectedOutput: "{city} and {year} and {topic} and {lang}",
      role: "{lang} writer",
    });
    expect(discoverInputs(spec)).toEqual(["year", "topic", "unused", "city", "lang"]);
  });

  it("ignores JSON and other braces", () => {
    const spec = crewWith({
      description: 'Answer as {"topic": "{topic}"} with { spaces } and {1abc} and {{ braces }}',
      expectedOutput: "{}",
    });
    expect(discoverInputs(spec)).toEqual(["topic"]);
  });

  it("is empty for a crew without placeholders or declared inputs", () => {
    expect(discoverInputs(crewWith({}))).toEqual([]);
  });

  it("discovers the example crew's single input", () => {
    const spec = crewWith({
      inputs: [{ name: "topic", description: "The subject" }],
      role: "{topic} Senior Data Researcher",
      goal: "Uncover cutting-edge developments in {topic}",
      description: "Conduct thorough research about {topic}.",
      expectedOutput: "A list with 10 bullet points about {topic}",
    });
    expect(discoverInputs(spec)).toEqual(["topic"]);
  });
});

describe("resolveInputs", () => {
  it("accepts a kickoff that gives every input", () => {
    const spec = crewWith({ inputs: [{ name: "topic" }], description: "{topic} in {year}" });
    expect(resolveInputs(spec, { topic: "AI", year: 2026 })).toEqual({ ok: true, inputs: { topic: "AI", year: 2026 } });
  });

  it("lists every missing name, declared and discovered, in discovery order", () => {
    const spec = crewWith({
      inputs: [{ name: "audience" }, { name: "topic" }],
      description: "{topic} for {audience} in {year}",
      role: "{lang} writer",
    });
    expect(resolveInputs(spec, { topic: "AI" })).toEqual({ ok: false, missing: ["audience", "year", "lang"] });
    expect(resolveInputs(spec, {})).toEqual({ ok: false, missing: ["audience", "topic", "year", "lang"] });
  });

  it("fills declared defaults of any JSON type, and a given value wins over the default", () => {
    const spec = crewWith({
      inputs: [
        { name: "topic", default: "AI" },
        { name: "count", default: 3 },
        { name: "strict", default: false },
        { name: "filters", default: { lang: "en" } },
        { name: "tags", default: ["a"] },
      ],
      description: "{topic} {count} {strict} {filters} {tags}",
    });
    expect(resolveInputs(spec, {})).toEqual({
      ok: true,
      inputs: { topic: "AI", count: 3, strict: false, filters: { lang: "en" }, tags: ["a"] },
    });
    expect(resolveInputs(spec, { topic: "Rust", count: 0 })).toEqual({
      ok: true,
      inputs: { topic: "Rust", count: 0, strict: false, filters: { lang: "en" }, tags: ["a"] },
    });
  });

  it("treats falsy given values as given", () => {
    const spec = crewWith({ description: "{a}{b}{c}{d}" });
    expect(resolveInputs(spec, { a: "", b: 0, c: false, d: null })).toEqual({
      ok: true,
      inputs: { a: "", b: 0, c: false, d: null },
    });
  });

  it("lets an optional input be omitted, rendering it as an empty string", () => {
    const spec = crewWith({
      inputs: [{ name: "topic" }, { name: "tone", required: false, description: "Writing tone" }],
      description: "{topic}, written in a {tone} tone",
    });
    const resolved = resolveInputs(spec, { topic: "AI" });
    expect(resolved).toEqual({ ok: true, inputs: { topic: "AI", tone: "" } });
    expect(interpolate(spec.tasks[0]!.description, resolved.ok ? resolved.inputs : {})).toBe("AI, written in a  tone");
  });

  it("uses an optional input's default when it has one, and the given value when given", () => {
    const spec = crewWith({ inputs: [{ name: "tone", required: false, default: "plain" }], description: "{tone}" });
    expect(resolveInputs(spec, {})).toEqual({ ok: true, inputs: { tone: "plain" } });
    expect(resolveInputs(spec, { tone: "formal" })).toEqual({ ok: true, inputs: { tone: "formal" } });
  });

  it("requires a declared input even when no text uses it", () => {
    const spec = crewWith({ inputs: [{ name: "audience" }] });
    expect(resolveInputs(spec, {})).toEqual({ ok: false, missing: ["audience"] });
  });

  it("keeps extra inputs the crew does not use", () => {
    const spec = crewWith({ description: "{topic}" });
    expect(resolveInputs(spec, { topic: "AI", extra: { x: 1 } })).toEqual({
      ok: true,
      inputs: { topic: "AI", extra: { x: 1 } },
    });
  });

  it("does not change the given object", () => {
    const spec = crewWith({
      inputs: [
        { name: "topic", default: "AI" },
        { name: "tone", required: false },
      ],
    });
    const given = {};
    resolveInputs(spec, given);
    expect(given).toEqual({});
  });

  it("does not take inherited object properties for inputs", () => {
    const spec = crewWith({ description: "{constructor} and {toString}" });
    expect(resolveInputs(spec, {})).toEqual({ ok: false, missing: ["constructor", "toString"] });
  });

  it("handles an input named __proto__ like any other name", () => {
    const spec = crewWith({ inputs: [{ name: "__proto__", default: { a: 1 } }], description: "{__proto__}" });
    const resolved = resolveInputs(spec, {});
    expect(resolved.ok).toBe(true);
    expect(resolved.ok && interpolate("{__proto__}", resolved.inputs)).toBe('{"a":1}');
  });
});
