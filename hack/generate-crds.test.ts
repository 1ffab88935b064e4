import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { CRD_DIR, crdYaml, generateCrds, structural, type Schema } from "./generate-crds.ts";

const files = generateCrds();
const byKind = Object.fromEntries(files.map((f) => [(f.crd.spec as { names: { kind: string } }).names.kind, f.crd]));

interface Version {
  name: string;
  subresources: unknown;
  additionalPrinterColumns: { name: string; type: string; jsonPath: string; priority?: number }[];
  schema: { openAPIV3Schema: Schema };
}
const version = (kind: string) => (byKind[kind]!.spec as { versions: Version[] }).versions[0]!;
const rootOf = (kind: string) => version(kind).schema.openAPIV3Schema;
const at = (schema: Schema, ...path: string[]): Schema =>
  path.reduce<Schema>(
    (node, step) => (step === "[]" ? node.items : (node.properties as Record<string, Schema>)[step]) as Schema,
    schema,
  );

/**
 * The structural-schema rules of apiextensions.k8s.io/v1 that a generator can get wrong, checked node by node:
 * every node has a type unless it preserves unknown fields, no $ref, no JSON Schema composition, no
 * additionalProperties next to properties, and nothing the apiserver rejects outright.
 */
function structuralProblems(node: Schema, path = "openAPIV3Schema"): string[] {
  const problems: string[] = [];
  const preserve = node["x-kubernetes-preserve-unknown-fields"] === true;
  if (!preserve && typeof node.type !== "string") problems.push(`${path}: no type`);
  for (const key of ["$ref", "$schema", "definitions", "$defs", "anyOf", "oneOf", "allOf", "not", "const"]) {
    if (key in node) problems.push(`${path}: has ${key}`);
  }
  if ("properties" in node && "additionalProperties" in node)
    problems.push(`${path}: additionalProperties alongside properties`);
  if (node.additionalProperties === false) problems.push(`${path}: additionalProperties: false`);
  if ("default" in node) problems.push(`${path}: default (defaults belong to the zod schemas)`);
  for (const bound of ["minimum", "maximum"]) {
    if (typeof node[bound] === "number" && Math.abs(node[bound]) >= Number.MAX_SAFE_INTEGER)
      problems.push(`${path}: huge ${bound}`);
  }
  if (node.type === "array" && !node.items) problems.push(`${path}: array without items`);
  for (const [name, child] of Object.entries((node.properties as Record<string, Schema> | undefined) ?? {})) {
    problems.push(...structuralProblems(child, `${path}.${name}`));
  }
  if (node.items) problems.push(...structuralProblems(node.items as Schema, `${path}[]`));
  if (node.additionalProperties && typeof node.additionalProperties === "object") {
    problems.push(...structuralProblems(node.additionalProperties as Schema, `${path}{}`));
  }
  return problems;
}

describe("the CRD manifests in crds/", () => {
  it.each(files.map((f) => [f.file, f] as const))("%s is what `npm run generate:crds` produces", (file, generated) => {
    const onDisk = readFileSync(join(CRD_DIR, file), "utf8");
    expect(onDisk, `crds/${file} is out of date: run npm run generate:crds`).toBe(crdYaml(generated));
  });

  it.each(files.map((f) => [f.file, f] as const))("%s parses back to the generated object", (_file, generated) => {
    expect(parse(crdYaml(generated))).toEqual(generated.crd);
  });
});

describe("generated CRDs", () => {
  it.each([
    ["Crew", "crews", "crew", ["crew"]],
    ["CrewExecution", "crewexecutions", "crewexecution", ["ce"]],
    ["CrewTaskResult", "crewtaskresults", "crewtaskresult", ["ctr"]],
  ])("%s: group kubecrew.io, v1alpha1, namespaced, names, category kubecrew", (kind, plural, singular, shortNames) => {
    const crd = byKind[kind]!;
    expect(crd).toMatchObject({
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: `${plural}.kubecrew.io` },
      spec: {
        group: "kubecrew.io",
        scope: "Namespaced",
        names: { kind, listKind: `${kind}List`, plural, singular, shortNames, categories: ["kubecrew"] },
      },
    });
    const versions = (crd.spec as { versions: unknown[] }).versions;
    expect(versions).toHaveLength(1);
    expect(versions[0]).toMatchObject({ name: "v1alpha1", served: true, storage: true, subresources: { status: {} } });
  });

  it.each(["Crew", "CrewExecution", "CrewTaskResult"])(
    "%s has a structural schema with metadata, spec and status",
    (kind) => {
      const root = rootOf(kind);
      expect(structuralProblems(root)).toEqual([]);
      expect(Object.keys(root.properties as object)).toEqual(["apiVersion", "kind", "metadata", "spec", "status"]);
      expect(at(root, "metadata")).toEqual({ type: "object" });
      expect(root.required).toEqual(["spec"]);
      expect(JSON.stringify(root)).not.toContain("$ref");
    },
  );

  it("marks free-form JSON (input values, meta, defaults) as preserved, null included", () => {
    const spec = at(rootOf("CrewExecution"), "spec");
    for (const field of ["inputs", "meta"]) {
      expect(at(spec, field)).toEqual({
        type: "object",
        additionalProperties: { nullable: true, "x-kubernetes-preserve-unknown-fields": true },
      });
    }
    expect(at(rootOf("Crew"), "spec", "inputs", "[]", "default")).toMatchObject({
      nullable: true,
      "x-kubernetes-preserve-unknown-fields": true,
    });
  });

  it("keeps the zod constraints a user meets: patterns, enums, bounds, list and name limits", () => {
    const spec = at(rootOf("Crew"), "spec");
    expect(at(spec, "tasks")).toMatchObject({ type: "array", minItems: 1, maxItems: 100 });
    expect(at(spec, "agents")).toMatchObject({ type: "array", minItems: 1, maxItems: 50 });
    expect(at(spec, "inputs")).toMatchObject({ type: "array", maxItems: 100 });
    expect(at(spec, "tasks", "[]", "name")).toMatchObject({
      type: "string",
      maxLength: 63,
      pattern: "^[A-Za-z_][A-Za-z0-9_-]*$",
    });
    expect(at(spec, "tasks", "[]", "agent")).toMatchObject({ maxLength: 63 });
    expect(at(spec, "tasks", "[]", "context")).toMatchObject({ maxItems: 20, items: { maxLength: 63 } });
    expect(at(spec, "tasks", "[]").required).toEqual(["name", "description", "expectedOutput"]);
    expect(at(spec, "process")).toMatchObject({ type: "string", enum: ["sequential", "hierarchical"] });
    expect(at(spec, "llm", "provider").enum).toEqual(["openai", "anthropic", "openai-compatible", "local", "mock"]);
    expect(at(spec, "runner", "retries")).toMatchObject({ type: "integer", minimum: 0, maximum: 10 });
    expect(at(spec, "runner", "taskTimeoutSeconds")).toMatchObject({
      type: "integer",
      minimum: 0,
      exclusiveMinimum: true,
    });
    expect(at(spec, "runner", "resources", "limits")).toEqual({
      type: "object",
      additionalProperties: { type: "string" },
    });
    // Fields with a zod default are optional: the default is filled when the crew is read.
    expect(at(spec, "inputs", "[]").required).toEqual(["name"]);
    expect(spec.required).toEqual(["agents", "tasks"]);
  });

  it("validates a Crew's consistency with CEL rules", () => {
    const rules = at(rootOf("Crew"), "spec")["x-kubernetes-validations"] as { rule: string; message: string }[];
    expect(rules.map((r) => r.rule)).toEqual([
      "self.tasks.all(t, has(t.agent) ? self.agents.exists(a, a.name == t.agent) : has(self.process) && self.process == 'hierarchical')",
      "!has(self.process) || self.process != 'hierarchical' || has(self.managerLlm) || has(self.managerAgent)",
      "self.tasks.all(t, self.tasks.exists_one(u, u.name == t.name))",
      "self.agents.all(a, self.agents.exists_one(b, b.name == a.name))",
      "!has(self.inputs) || self.inputs.all(i, self.inputs.exists_one(j, j.name == i.name))",
      "self.tasks.all(t, !has(t.context) || sets.contains(self.tasks.map(u, u.name), t.context))",
      "self.tasks.all(t, !has(t.context) || !(t.name in t.context))",
      "size(self.tasks) < 2 || !(has(self.tasks[size(self.tasks) - 1].asyncExecution) && self.tasks[size(self.tasks) - 1].asyncExecution" +
        " && has(self.tasks[size(self.tasks) - 2].asyncExecution) && self.tasks[size(self.tasks) - 2].asyncExecution)",
      "!has(self.mcpServers) || self.mcpServers.all(s, self.mcpServers.exists_one(t, t.name == s.name))",
      "!has(self.runner) || !has(self.runner.crew) || (has(self.runtime) && self.runtime == 'crewai')",
    ]);
    expect(rules.map((r) => r.message)).toEqual([
      "every task's agent must be the name of an agent in spec.agents; only a hierarchical crew's task may leave it out",
      "process hierarchical needs a manager: set managerLlm or managerAgent",
      "task names must be unique",
      "agent names must be unique",
      "input names must be unique",
      "a task's context must name tasks of this crew",
      "a task cannot take context from itself",
      "a crew may end with at most one asynchronous task (asyncExecution)",
      "MCP server names must be unique",
      "runner.crew names a CrewAI project, which only the crewai runtime runs: set spec.runtime to crewai",
    ]);
    expect(at(at(rootOf("Crew"), "spec"), "mcpServers", "[]", "headers", "[]")["x-kubernetes-validations"]).toEqual([
      expect.objectContaining({ rule: "has(self.value) != has(self.valueFrom)" }),
    ]);
    for (const path of [["llm"], ["agents", "[]", "llm"]]) {
      expect(at(at(rootOf("Crew"), "spec"), ...path)["x-kubernetes-validations"]).toEqual([
        expect.objectContaining({ rule: "self.provider != 'openai-compatible' || has(self.baseURL)" }),
      ]);
    }
  });

  it("keeps a CrewExecution on its crew, a stop final, and people's decisions", () => {
    const rules = at(rootOf("CrewExecution"), "spec")["x-kubernetes-validations"] as { rule: string }[];
    expect(rules.map((r) => r.rule)).toEqual([
      "self.crewRef.name == oldSelf.crewRef.name",
      "!(has(oldSelf.stop) && oldSelf.stop) || (has(self.stop) && self.stop)",
      "!has(oldSelf.decisions) || (has(self.decisions) && size(self.decisions) >= size(oldSelf.decisions))",
    ]);
  });

  it("shows STATUS, PROGRESS, CURRENT TASK, DURATION and AGE for executions", () => {
    const columns = version("CrewExecution").additionalPrinterColumns.filter((c) => !c.priority);
    expect(columns.map((c) => [c.name.toUpperCase(), c.type, c.jsonPath])).toEqual([
      ["STATUS", "string", ".status.phase"],
      ["PROGRESS", "string", ".status.progressText"],
      ["CURRENT TASK", "string", ".status.currentTask"],
      ["DURATION", "number", ".status.executionTime"],
      ["AGE", "date", ".metadata.creationTimestamp"],
    ]);
  });

  it("shows READY, TASKS and AGE for crews", () => {
    const columns = version("Crew").additionalPrinterColumns.filter((c) => !c.priority);
    expect(columns.map((c) => [c.name.toUpperCase(), c.type, c.jsonPath])).toEqual([
      ["READY", "string", '.status.conditions[?(@.type=="Ready")].status'],
      ["TASKS", "integer", ".status.taskCount"],
      ["AGE", "date", ".metadata.creationTimestamp"],
    ]);
  });

  it("points every printer column at a field the schema has", () => {
    for (const kind of ["Crew", "CrewExecution", "CrewTaskResult"]) {
      for (const column of version(kind).additionalPrinterColumns) {
        const path = column.jsonPath
          .replace(/\[\?\(@\.type=="\w+"\)\]/, "[]")
          .split(".")
          .filter(Boolean);
        if (path[0] === "metadata") continue;
        const steps = path.flatMap((p) => (p.endsWith("[]") ? [p.slice(0, -2), "[]"] : [p]));
        expect(at(rootOf(kind), ...steps), `${kind} ${column.jsonPath}`).toBeDefined();
      }
    }
  });
});

describe("structural", () => {
  it("inlines $refs and merges a single allOf", () => {
    const definitions = { thing: { type: "object", properties: { a: { type: "string" } } } };
    expect(structural({ allOf: [{ $ref: "#/definitions/thing" }], description: "A thing" }, definitions)).toEqual({
      description: "A thing",
      type: "object",
      properties: { a: { type: "string" } },
    });
  });

  it("drops closed objects, defaults and unsafe-integer bounds", () => {
    expect(
      structural(
        {
          type: "object",
          additionalProperties: false,
          properties: { n: { type: "integer", minimum: -9007199254740991, maximum: 9007199254740991, default: 1 } },
        },
        {},
      ),
    ).toEqual({ type: "object", properties: { n: { type: "integer" } } });
  });

  it("refuses a union it cannot make structural, naming where it is", () => {
    expect(() =>
      structural({ type: "object", properties: { x: { anyOf: [{ type: "string" }, { type: "number" }] } } }, {}),
    ).toThrow("#.x: anyOf is not structural");
  });

  it("refuses a recursive schema that is not marked free-form", () => {
    const definitions = { node: { type: "object", properties: { child: { $ref: "#/definitions/node" } } } };
    expect(() => structural({ $ref: "#/definitions/node" }, definitions)).toThrow("recursive schema node");
  });
});
