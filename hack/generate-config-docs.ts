/**
 * Writes the reference part of docs/configuration.md from the components' zod schemas (each variable's name, the
 * components that read it, its default and its meaning), so the document cannot drift from what is read. The text
 * above the marker is written by hand; everything below it is generated.
 * `npm run generate:config-docs` writes it; hack/generate-config-docs.test.ts fails when docs/configuration.md is stale.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { format, resolveConfig } from "prettier";
import { apiConfigSchema } from "../api/config.ts";
import { adminCliConfigSchema } from "../cli/token-store-session.ts";
import { clientConfigSchema } from "../cli/client-config.ts";
import { modelSourceVariables } from "../cli/model-source-variables.ts";
import { controllerConfigSchema } from "../controller/config.ts";
import { modelDirVariables } from "../core/local-models.ts";
import { devConfigSchema } from "../dev/config.ts";
import { integrationsConfigSchema } from "../integrations/config.ts";
import { providerVariables } from "../integrations/provider-settings.ts";
import { kubeconfigVariables } from "../kube/runtime/kubeconfig.ts";
import { tracingVariables } from "../platform/telemetry/tracing.ts";
import { adapterVariables, runnerEnv } from "../runner/config.ts";
import { mcpHeaderVariables } from "../runner/mcp-headers.ts";
import { llmKeyVariables } from "../runner/llm.ts";
import { configReference, type ComponentVariables } from "./config-reference.ts";

export const CONFIG_DOC = join(import.meta.dirname, "..", "docs", "configuration.md");

export const MARKER =
  "<!-- Generated below by hack/generate-config-docs.ts from the components' zod schemas. Do not edit below: run `npm run generate:config-docs`. -->";

/** Each component and the schemas of what it reads: its config schema, and the variables read where they are used. */
export const COMPONENTS: ComponentVariables[] = [
  {
    component: "controller",
    title: "The controller (`kubecrew controller`)",
    schemas: [controllerConfigSchema, tracingVariables, kubeconfigVariables],
  },
  {
    component: "api",
    title: "The crew API (`kubecrew api`)",
    schemas: [apiConfigSchema, tracingVariables, kubeconfigVariables],
  },
  {
    component: "integrations",
    title: "The integrations service (`kubecrew integrations`)",
    schemas: [integrationsConfigSchema, providerVariables, tracingVariables],
  },
  {
    component: "runner",
    title: "The task runner (`kubecrew runner`, in task pods and under `kubecrew dev`)",
    schemas: [runnerEnv, llmKeyVariables, mcpHeaderVariables, tracingVariables, modelDirVariables, kubeconfigVariables],
  },
  {
    component: "crewai-adapter",
    title: "The CrewAI adapter (Python, started by the runner for `runtime: crewai`)",
    schemas: [adapterVariables, tracingVariables],
  },
  {
    component: "dev",
    title: "Local development (`kubecrew dev`, `npm start`)",
    schemas: [devConfigSchema, tracingVariables, modelDirVariables],
  },
  {
    component: "cli",
    title: "The commands (`kubecrew run`, `status`, `login`, `token`, `client`, `model`, …)",
    schemas: [clientConfigSchema, adminCliConfigSchema, modelDirVariables, modelSourceVariables],
  },
];

/** docs/configuration.md as it should be: its hand-written part as it is, the reference generated after the marker. */
export async function expectedConfigDoc(current = readFileSync(CONFIG_DOC, "utf8")): Promise<string> {
  const at = current.indexOf(MARKER);
  if (at < 0) throw new Error(`docs/configuration.md has lost its marker line; put it back:\n${MARKER}`);
  const text = `${current.slice(0, at + MARKER.length)}\n\n${configReference(COMPONENTS)}\n`;
  const options = await resolveConfig(CONFIG_DOC);
  return format(text, { ...options, parser: "markdown" });
}

if (import.meta.main) {
  writeFileSync(CONFIG_DOC, await expectedConfigDoc());
  console.log("wrote docs/configuration.md");
}
