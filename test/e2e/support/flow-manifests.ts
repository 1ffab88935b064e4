import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse, stringify } from "yaml";
import { repo } from "./fixture.ts";

/** A crewai.flow/v1 document as a Flow resource, its agents on `llm` (the kubecrew.io/llm annotation). */
export function flowManifest(name: string, document: unknown, llm: Record<string, unknown>): string {
  return stringify({
    apiVersion: "kubecrew.io/v1alpha1",
    kind: "Flow",
    metadata: { name, annotations: { "kubecrew.io/llm": JSON.stringify(llm) } },
    spec: document,
  });
}

/** The repository's example flow (examples/review-flow.yaml), as its bare document. */
export function exampleFlowDocument(): Record<string, unknown> {
  return parse(readFileSync(join(repo, "examples", "review-flow.yaml"), "utf8")) as Record<string, unknown>;
}
