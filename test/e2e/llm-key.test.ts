import { describe, expect, inject, it } from "vitest";
import { answer, startLlmFixture, type LlmFixture } from "../support/llm-fixture.ts";
import { crewSuite } from "./support/crew-suite.ts";
import { finalStatus, kickoff } from "./support/fixture.ts";
import { hostForPods } from "./support/installed.ts";
import { kubectl } from "./support/kubectl.ts";

/**
 * A crew on an OpenAI-compatible LLM (the fixture server) whose key comes from a Secret through secretKeyRef: with the
 * suite's own controller on the local node, and against the chart installed on kind, where the task pods are real
 * containers that reach the fixture at this machine's address on the kind network.
 */
const kubeconfig = inject("kubeconfig");
let llm: LlmFixture;

const suite = crewSuite(kubeconfig, {
  prefix: "llm",
  before: async () => {
    llm = await startLlmFixture(hostForPods());
  },
  after: () => llm?.stop(),
  secrets: { "llm-key": { "api-key": "sk-e2e-from-secret" } },
  crews: () => [
    `apiVersion: kubecrew.io/v1alpha1
kind: Crew
metadata: { name: keyed }
spec:
  inputs: [{ name: topic }]
  llm:
    provider: openai-compatible
    model: fixture-model
    baseURL: ${llm.baseURL}
    apiKeySecretRef: { name: llm-key, key: api-key }
  agents:
    - { name: analyst, role: "{topic} Analyst", goal: "Understand {topic}" }
  tasks:
    - { name: research, agent: analyst, description: "Research {topic}", expectedOutput: "Facts" }
    - { name: summary, agent: analyst, description: "Summarise the research", expectedOutput: "A paragraph" }
`,
  ],
});

describe("the agent's LLM key", () => {
  it("reaches the runner from a Secret through secretKeyRef, and each task gets the earlier outputs as context", async () => {
    llm.enqueue(
      answer("Tides follow the moon.", { inputTokens: 30, outputTokens: 5 }),
      answer("In short: the moon.", { inputTokens: 40, outputTokens: 4 }),
    );
    const id = await kickoff(suite.api, "keyed");
    const final = await finalStatus(suite.api, "keyed", id);
    expect(final).toMatchObject({ status: "completed", result: { output: "In short: the moon." } });
    expect(final.result.tasks.map((t: { output: string }) => t.output)).toEqual([
      "Tides follow the moon.",
      "In short: the moon.",
    ]);
    expect(llm.requests).toHaveLength(2);
    for (const r of llm.requests) expect(r.headers.authorization).toBe("Bearer sk-e2e-from-secret");
    expect(JSON.stringify(llm.requests[1]!.body)).toContain("Tides follow the moon.");
    const job = JSON.parse(await kubectl(kubeconfig, ["get", "job", `${id}-0`, "-n", suite.namespace, "-o", "json"]));
    const env = job.spec.template.spec.containers[0].env;
    expect(env).toContainEqual({
      name: "KUBECREW_LLM_API_KEY",
      valueFrom: { secretKeyRef: { name: "llm-key", key: "api-key" } },
    });
    expect(JSON.stringify(job)).not.toContain("sk-e2e-from-secret");
  });
});
