import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { parse } from "yaml";
import { unknownFields, type StructuralSchema } from "./unknown-fields.ts";

const crewSchema = (): StructuralSchema =>
  parse(readFileSync(join(import.meta.dirname, "../crds/crews.yaml"), "utf8")).spec.versions[0].schema.openAPIV3Schema;

/** A manifest as a test edits it, field by field. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Manifest = Record<string, any>;

const crew = (extra: (c: Manifest) => void = () => {}) => {
  const c: Manifest = {
    apiVersion: "kubecrew.io/v1alpha1",
    kind: "Crew",
    metadata: { name: "notes", labels: { team: "a" }, annotations: { "x/y": "z" } },
    spec: {
      inputs: [{ name: "topic", default: { any: ["json", { here: 1 }] } }],
      agents: [{ name: "writer", role: "r", goal: "g", backstory: "b" }],
      tasks: [{ name: "one", agent: "writer", description: "d", expectedOutput: "e" }],
    },
  };
  extra(c);
  return c;
};

it("finds nothing in a crew that declares only known fields (free-form values and maps included)", () => {
  expect(unknownFields(crew(), crewSchema())).toEqual([]);
});

it("names every unknown field by its path, as the apiserver's strict field validation does", () => {
  const manifest = crew((c) => {
    c.metadata.labelz = { a: "b" };
    c.spec.agents[0].rol = "typo";
    c.spec.agents[0].llm = { provider: "mock", model: "m", temprature: 0.2 };
    c.spec.tasks.push({ name: "two", agent: "writer", description: "d", expectedOutput: "e", async: true });
    c.spec.planning = true;
    c.extra = 1;
  });
  expect(unknownFields(manifest, crewSchema())).toEqual([
    "metadata.labelz",
    "spec.agents[0].rol",
    "spec.agents[0].llm.temprature",
    "spec.tasks[1].async",
    "spec.planning",
    "extra",
  ]);
});
