import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { MemoryTokenStore } from "../../api/auth/memory-token-store.ts";
import { devConfigSchema, repoRoot } from "../../dev/config.ts";
import { startDev, type RunningDev } from "../../dev/start.ts";
import { silentLogger, type Logger } from "../../core/logger.ts";
import type { Resolver } from "../../platform/outbound/outbound-fetch.ts";

export { waitFor } from "./wait-for.ts";

export const tokens = {
  org: "kco_test-org-token-0000000000000000",
  alice: "kcu_test-alice-token-000000000000000",
  bob: "kcu_test-bob-token-00000000000000000",
  other: "kco_test-other-crew-token-0000000000",
};

/** A crew manifest whose every agent uses the mock provider with the given model (e.g. "fail", "sleep-2000"). */
export function crewYaml(
  name: string,
  model: string,
  options: { tasks?: number; retries?: number; taskTimeout?: number } = {},
) {
  const tasks = Array.from({ length: options.tasks ?? 3 }, (_, i) => i + 1);
  return `apiVersion: kubecrew.io/v1alpha1
kind: Crew
metadata: { name: ${name} }
spec:
  inputs: [{ name: topic }]
  llm: { provider: mock, model: "${model}" }
  agents:
    - { name: writer, role: "{topic} Writer", goal: "Write about {topic}", backstory: "Writes well." }
  tasks:
${tasks.map((i) => `    - { name: step${i}, agent: writer, description: "Step ${i} on {topic}", expectedOutput: "Text ${i}" }`).join("\n")}
  runner: { retries: ${options.retries ?? 0}, taskTimeoutSeconds: ${options.taskTimeout ?? 60} }
`;
}

/** `kubecrew dev` on a free port with the example crews plus test crews, and fixed tokens for two users. */
export async function startTestDev(
  extraCrews: Record<string, string> = {},
  options: { log?: Logger; resolver?: Resolver; env?: Record<string, string>; runnerEnv?: NodeJS.ProcessEnv } = {},
): Promise<RunningDev> {
  const dir = mkdtempSync(join(tmpdir(), "kubecrew-crews-"));
  writeFileSync(join(dir, "research-crew.yaml"), readExample());
  for (const [file, yaml] of Object.entries(extraCrews)) {
    // A path with folders (a flow's crew declaration beside it) gets its folders.
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    writeFileSync(join(dir, file), yaml);
  }
  const store = new MemoryTokenStore();
  store.add(tokens.org, { kind: "org", crews: "*", subject: "org" });
  store.add(tokens.alice, { kind: "user", crews: "*", subject: "alice" });
  store.add(tokens.bob, { kind: "user", crews: "*", subject: "bob" });
  store.add(tokens.other, { kind: "org", crews: ["someone-else"], subject: "other" });
  const config = devConfigSchema.parse({
    PORT: "0",
    KUBECREW_CREWS_DIR: dir,
    KUBECREW_DEFAULT_CREW: "research",
    ...options.env,
  });
  return startDev(config, options.log ?? silentLogger(), {
    tokens: store,
    ...(options.resolver ? { resolver: options.resolver } : {}),
    ...(options.runnerEnv ? { env: options.runnerEnv } : {}),
  });
}

function readExample() {
  return readFileSync(join(repoRoot, "examples/research-crew.yaml"), "utf8");
}
