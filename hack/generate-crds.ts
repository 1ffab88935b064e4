/**
 * Generates the CRD manifests in crds/ from the zod schemas of core/ (the single source of truth), adding what only
 * Kubernetes needs: structural OpenAPI v3 schemas, CEL validation, printer columns, short names, the status
 * subresource. `npm run generate:crds` writes the files; hack/generate-crds.test.ts fails when they are out of date.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { stringify } from "yaml";
import { API_GROUP, API_VERSION, CRD_VERSION } from "../core/api-group.ts";
import { appActionReferences, appNames } from "../core/apps.ts";
import { crew } from "../core/crew-resource.ts";
import { crewExecution } from "../core/execution.ts";
import { jsonValue } from "../core/json.ts";
import { crewTaskResult } from "../core/task-result.ts";
import { flowExecution, flowResource } from "../core/flow/flow-resources.ts";
import { crewRules, guardrailRule, headerRule, llmRule } from "./crew-cel-rules.ts";

/** An OpenAPI v3 schema node as apiextensions.k8s.io/v1 takes it. */
export type Schema = { [key: string]: unknown };

export interface CrdFile {
  /** File name under crds/. */
  file: string;
  crd: Schema;
}

interface KindSettings {
  kind: string;
  plural: string;
  singular: string;
  shortNames: string[];
  description: string;
  schema: z.ZodType;
  printerColumns: Schema[];
  /** Kubernetes-only additions to the generated schema: CEL rules and the like. */
  amend?: (root: Schema) => void;
}

/** Marks free-form JSON (input values, meta, defaults): any value, kept as it is, null included. */
const FREE_FORM: Schema = { "x-kubernetes-preserve-unknown-fields": true, nullable: true };

/** Integer bounds zod adds for safe integers; they say nothing and are noise in a CRD. */
const SAFE_INTEGER_BOUND = Number.MAX_SAFE_INTEGER;

/** Keys dropped from every node: JSON Schema details with no place (or a different meaning) in a CRD schema. */
const DROPPED_KEYS = new Set(["$schema", "$id", "id", "definitions", "$defs", "default", "propertyNames", "const"]);

/**
 * Turns zod's OpenAPI 3.0 output into a structural schema: $refs inlined, single-element allOf merged, free-form JSON
 * as preserve-unknown-fields, closed objects opened (the apiserver prunes unknown fields anyway), defaults left to the
 * zod layer (applied on every read, so changing a default never needs a stored-object migration).
 */
export function structural(node: Schema, definitions: Record<string, Schema>, path = "#", seen: string[] = []): Schema {
  if (typeof node.$ref === "string") {
    const name = node.$ref.replace(/^#\/(definitions|\$defs)\//, "");
    const target = definitions[name];
    if (!target) throw new Error(`${path}: unresolved $ref ${node.$ref}`);
    if (seen.includes(name)) throw new Error(`${path}: recursive schema ${name} must be free-form JSON`);
    const { $ref: _ref, ...rest } = node;
    return structural({ ...target, ...rest }, definitions, path, [...seen, name]);
  }
  if (Array.isArray(node.allOf) && node.allOf.length === 1) {
    const { allOf, ...rest } = node;
    return structural({ ...(allOf[0] as Schema), ...rest }, definitions, path, seen);
  }
  for (const union of ["anyOf", "oneOf", "allOf", "not"]) {
    if (union in node) throw new Error(`${path}: ${union} is not structural; model it as one object or free-form JSON`);
  }
  const out: Schema = {};
  for (const [key, value] of Object.entries(node)) {
    if (DROPPED_KEYS.has(key)) continue;
    if (key === "additionalProperties" && value === false) continue;
    if ((key === "minimum" || key === "maximum") && typeof value === "number" && Math.abs(value) >= SAFE_INTEGER_BOUND)
      continue;
    if (key === "properties") {
      out.properties = Object.fromEntries(
        Object.entries(value as Record<string, Schema>).map(([name, child]) => [
          name,
          structural(child, definitions, `${path}.${name}`, seen),
        ]),
      );
    } else if (key === "items" || key === "additionalProperties") {
      out[key] = structural(value as Schema, definitions, `${path}[]`, seen);
    } else {
      out[key] = value;
    }
  }
  if (out["x-kubernetes-preserve-unknown-fields"] === true) delete out.type;
  return readable(out);
}

/** The order a reader looks for: what a node is, then its constraints, then its children, then Kubernetes extensions. */
const KEY_ORDER = ["description", "type", "nullable", "format", "enum", "pattern"];
const LATE_KEYS = ["properties", "additionalProperties", "items", "required"];

function readable(node: Schema): Schema {
  const rank = (key: string) => {
    if (KEY_ORDER.includes(key)) return KEY_ORDER.indexOf(key);
    if (LATE_KEYS.includes(key)) return 100 + LATE_KEYS.indexOf(key);
    if (key.startsWith("x-kubernetes-")) return 200;
    return 50;
  };
  return Object.fromEntries(Object.entries(node).sort(([a], [b]) => rank(a) - rank(b)));
}

/** zod's JSON Schema of one resource, with free-form JSON marked where zod would emit a recursive union. */
function openApiSchema(schema: z.ZodType): Schema {
  const generated = z.toJSONSchema(schema, {
    target: "openapi-3.0",
    io: "input",
    override: (ctx) => {
      if ((ctx.zodSchema as unknown) !== jsonValue) return;
      const json = ctx.jsonSchema as Schema;
      for (const key of Object.keys(json)) delete json[key];
      Object.assign(json, FREE_FORM);
    },
  }) as Schema;
  const definitions = {
    ...(generated.definitions as Record<string, Schema>),
    ...(generated.$defs as Record<string, Schema>),
  };
  return structural(generated, definitions);
}

/** The resource schema as a CRD version holds it: the apiserver owns apiVersion, kind and metadata. */
function resourceSchema(settings: KindSettings): Schema {
  const generated = openApiSchema(settings.schema);
  const properties = generated.properties as Record<string, Schema>;
  const root: Schema = {
    description: settings.description,
    type: "object",
    properties: {
      apiVersion: { type: "string", description: API_VERSION },
      kind: { type: "string", description: settings.kind },
      metadata: { type: "object" },
      spec: properties.spec,
      status: properties.status ?? { type: "object", description: "Not used: the resource is complete in spec" },
    },
    required: ["spec"],
  };
  settings.amend?.(root);
  return structural(root, {});
}

function crd(settings: KindSettings): Schema {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${settings.plural}.${API_GROUP}` },
    spec: {
      group: API_GROUP,
      scope: "Namespaced",
      names: {
        kind: settings.kind,
        listKind: `${settings.kind}List`,
        plural: settings.plural,
        singular: settings.singular,
        shortNames: settings.shortNames,
        categories: ["kubecrew"],
      },
      versions: [
        {
          name: CRD_VERSION,
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: settings.printerColumns,
          schema: { openAPIV3Schema: resourceSchema(settings) },
        },
      ],
    },
  };
}

const age = { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" };

function child(schema: Schema, ...path: string[]): Schema {
  let node = schema;
  for (const step of path) {
    const next = step === "[]" ? node.items : (node.properties as Record<string, Schema> | undefined)?.[step];
    if (!next) throw new Error(`schema has no ${path.join(".")}`);
    node = next as Schema;
  }
  return node;
}

export const kinds: KindSettings[] = [
  {
    kind: "Crew",
    plural: "crews",
    singular: "crew",
    shortNames: ["crew"],
    description: "A crew: ordered tasks carried out by AI agents. Each run of it is a CrewExecution.",
    schema: crew,
    printerColumns: [
      { name: "Ready", type: "string", jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
      { name: "Tasks", type: "integer", jsonPath: ".status.taskCount" },
      { name: "Reason", type: "string", jsonPath: '.status.conditions[?(@.type=="Ready")].reason', priority: 1 },
      age,
    ],
    amend(root) {
      const spec = child(root, "spec");
      spec["x-kubernetes-validations"] = crewRules;
      child(spec, "llm")["x-kubernetes-validations"] = [llmRule];
      child(spec, "agents", "[]", "llm")["x-kubernetes-validations"] = [llmRule];
      child(spec, "managerLlm")["x-kubernetes-validations"] = [llmRule];
      child(spec, "managerAgent", "llm")["x-kubernetes-validations"] = [llmRule];
      child(spec, "mcpServers", "[]", "headers", "[]")["x-kubernetes-validations"] = [headerRule];
      child(spec, "tasks", "[]", "guardrails", "[]")["x-kubernetes-validations"] = [guardrailRule];
      // The apiserver names every supported value when one is not: the app names and their app/action names.
      child(spec, "agents", "[]", "apps", "[]").enum = [...appNames, ...appActionReferences];
      child(spec, "managerAgent", "apps", "[]").enum = [...appNames, ...appActionReferences];
    },
  },
  {
    kind: "CrewExecution",
    plural: "crewexecutions",
    singular: "crewexecution",
    shortNames: ["ce"],
    description: "One run of a crew. Its name is the kickoff_id of the crew API.",
    schema: crewExecution,
    printerColumns: [
      { name: "Status", type: "string", jsonPath: ".status.phase" },
      { name: "Progress", type: "string", jsonPath: ".status.progressText" },
      { name: "Current Task", type: "string", jsonPath: ".status.currentTask" },
      { name: "Duration", type: "number", jsonPath: ".status.executionTime", description: "Seconds, once finished" },
      { name: "Crew", type: "string", jsonPath: ".spec.crewRef.name", priority: 1 },
      { name: "Error", type: "string", jsonPath: ".status.error", priority: 1 },
      age,
    ],
    amend(root) {
      // An execution runs the crew and inputs it was created with; `stop` changes only one way; a resume appends a
      // decision (and may replace the webhook URLs).
      child(root, "spec")["x-kubernetes-validations"] = [
        { rule: "self.crewRef.name == oldSelf.crewRef.name", message: "crewRef cannot change", fieldPath: ".crewRef" },
        {
          rule: "!(has(oldSelf.stop) && oldSelf.stop) || (has(self.stop) && self.stop)",
          message: "a stopped execution cannot be started again",
          fieldPath: ".stop",
        },
        {
          // People's decisions are a record (POST /resume appends one): none is taken back.
          rule: "!has(oldSelf.decisions) || (has(self.decisions) && size(self.decisions) >= size(oldSelf.decisions))",
          message: "decisions are only appended",
          fieldPath: ".decisions",
        },
      ];
    },
  },
  {
    kind: "CrewTaskResult",
    plural: "crewtaskresults",
    singular: "crewtaskresult",
    shortNames: ["ctr"],
    description: "One task's output (or error), written by the runner of that task and owned by its CrewExecution.",
    schema: crewTaskResult,
    printerColumns: [
      { name: "Execution", type: "string", jsonPath: ".spec.executionRef.name" },
      { name: "Task", type: "string", jsonPath: ".spec.taskName" },
      { name: "Attempt", type: "integer", jsonPath: ".spec.attempt" },
      { name: "Time", type: "number", jsonPath: ".spec.executionTime", description: "Seconds" },
      { name: "Error", type: "string", jsonPath: ".spec.error", priority: 1 },
      age,
    ],
  },
  {
    kind: "Flow",
    plural: "flows",
    singular: "flow",
    shortNames: ["fl"],
    description:
      "A declarative CrewAI flow: its spec is the crewai.flow/v1 document. Each run of it is a FlowExecution; its Ready condition names every problem.",
    schema: flowResource,
    printerColumns: [
      { name: "Ready", type: "string", jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
      { name: "Methods", type: "integer", jsonPath: ".status.methodCount" },
      { name: "Reason", type: "string", jsonPath: '.status.conditions[?(@.type=="Ready")].reason', priority: 1 },
      { name: "Message", type: "string", jsonPath: '.status.conditions[?(@.type=="Ready")].message', priority: 1 },
      age,
    ],
    amend(root) {
      // CrewAI's document may carry keys kubecrew does not read (persist, a method's metadata): kept as written.
      const spec = child(root, "spec");
      delete spec.additionalProperties;
      spec["x-kubernetes-preserve-unknown-fields"] = true;
    },
  },
  {
    kind: "FlowExecution",
    plural: "flowexecutions",
    singular: "flowexecution",
    shortNames: ["fe"],
    description: "One run of a Flow. Its name is the kickoff_id of /flows/{flow}/kickoff.",
    schema: flowExecution,
    printerColumns: [
      { name: "Status", type: "string", jsonPath: ".status.phase" },
      { name: "Progress", type: "string", jsonPath: ".status.progressText" },
      { name: "Current Method", type: "string", jsonPath: ".status.currentMethod" },
      { name: "Duration", type: "number", jsonPath: ".status.executionTime", description: "Seconds, once finished" },
      { name: "Flow", type: "string", jsonPath: ".spec.flowRef.name", priority: 1 },
      { name: "Error", type: "string", jsonPath: ".status.error", priority: 1 },
      age,
    ],
    amend(root) {
      child(root, "spec")["x-kubernetes-validations"] = [
        { rule: "self.flowRef.name == oldSelf.flowRef.name", message: "flowRef cannot change", fieldPath: ".flowRef" },
        {
          rule: "!(has(oldSelf.stop) && oldSelf.stop) || (has(self.stop) && self.stop)",
          message: "a stopped run cannot be started again",
          fieldPath: ".stop",
        },
        {
          rule: "!has(oldSelf.feedback) || (has(self.feedback) && size(self.feedback) >= size(oldSelf.feedback))",
          message: "feedback is only appended",
          fieldPath: ".feedback",
        },
      ];
    },
  },
];

export function generateCrds(): CrdFile[] {
  return kinds.map((k) => ({ file: `${k.plural}.yaml`, crd: crd(k) }));
}

const HEADER =
  "# Generated by hack/generate-crds.ts from the zod schemas in core/. Do not edit: run `npm run generate:crds`.\n";

export function crdYaml(file: CrdFile): string {
  return HEADER + stringify(file.crd, { lineWidth: 0, aliasDuplicateObjects: false });
}

export const CRD_DIR = join(import.meta.dirname, "..", "crds");

if (import.meta.main) {
  for (const file of generateCrds()) {
    writeFileSync(join(CRD_DIR, file.file), crdYaml(file));
    console.log(`wrote crds/${file.file}`);
  }
  // The chart carries copies of the CRDs; keep them equal in the same step.
  const { syncChartFiles } = await import("./sync-chart-files.ts");
  for (const copy of syncChartFiles()) console.log(`wrote ${copy}`);
}
