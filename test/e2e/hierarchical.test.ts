import { describe, expect, inject, it } from "vitest";
import { answer, startLlmFixture, toolCalls, type LlmFixture } from "../support/llm-fixture.ts";
import { crewSuite } from "./support/crew-suite.ts";
import { finalStatus, kickoff, resultsOf, type Loose } from "./support/fixture.ts";
import { hostForPods } from "./support/installed.ts";

/**
 * The hierarchical process on a real control plane: the task's pod runs the manager, which hands work to one agent and
 * asks another a question; both coworkers run in that pod, and the CrewTaskResult (its CRD schema) keeps the
 * delegation steps; each model call carries the key of its own agent's Secret (a coworker's key is not the manager's).
 * A hierarchical crew without a manager is refused at apply by the CRD's CEL rule.
 */
const kubeconfig = inject("kubeconfig");
let llm: LlmFixture;

const crew = (name: string, manager: string) => `apiVersion: kubecrew.io/v1alpha1
kind: Crew
metadata: { name: ${name} }
spec:
  inputs: [{ name: topic }]
  llm: { provider: openai-compatible, model: fixture-model, baseURL: "${llm.baseURL}" }
  process: hierarchical
${manager}  agents:
    - name: researcher
      role: Researcher
      goal: "Find facts on {topic}"
      llm: { provider: openai-compatible, model: fixture-model, baseURL: "${llm.baseURL}", apiKeySecretRef: { name: researcher-key, key: key } }
    - name: writer
      role: Writer
      goal: "Write plainly"
      llm: { provider: openai-compatible, model: fixture-model, baseURL: "${llm.baseURL}", apiKeySecretRef: { name: writer-key, key: key } }
  tasks:
    - { name: article, description: "Write a short article on {topic}", expectedOutput: "One paragraph" }
  runner: { retries: 0 }
`;

const suite = crewSuite(kubeconfig, {
  prefix: "hierarchical",
  before: async () => {
    llm = await startLlmFixture(hostForPods());
  },
  after: () => llm?.stop(),
  secrets: {
    "manager-key": { key: "sk-manager" },
    "researcher-key": { key: "sk-researcher" },
    "writer-key": { key: "sk-writer" },
  },
  crews: () => [
    crew(
      "managed",
      `  managerLlm: { provider: openai-compatible, model: manager-model, baseURL: "${llm.baseURL}", apiKeySecretRef: { name: manager-key, key: key } }\n`,
    ),
  ],
});

describe("the hierarchical process in task pods", () => {
  it("completes with the manager's delegations to two coworkers as steps of the CrewTaskResult", async () => {
    llm.enqueue(
      toolCalls({ name: "delegate_work", input: { coworker: "Researcher", task: "Find two facts", context: "" } }),
      answer("Tides follow the moon."),
      toolCalls({ name: "ask_coworker", input: { coworker: "Writer", question: "Say it plainly", context: "" } }),
      answer("The moon pulls the sea."),
      answer("The moon pulls the sea, twice a day."),
    );
    const id = await kickoff(suite.api, "managed");
    const final = await finalStatus(suite.api, "managed", id, 120_000);
    expect(final.status, JSON.stringify(final)).toBe("completed");
    expect(final.result.output).toBe("The moon pulls the sea, twice a day.");
    expect(llm.requests.map((r) => r.body.model)).toEqual([
      "manager-model",
      "fixture-model",
      "manager-model",
      "fixture-model",
      "manager-model",
    ]);
    expect(llm.requests.map((r) => r.headers.authorization)).toEqual([
      "Bearer sk-manager",
      "Bearer sk-researcher",
      "Bearer sk-manager",
      "Bearer sk-writer",
      "Bearer sk-manager",
    ]);

    const result = (await resultsOf(kubeconfig, suite.namespace, id)).find((r) => r.spec.output !== undefined);
    expect(result.spec.agent).toBe("Crew Manager");
    const delegations = result.spec.steps
      .filter((s: Loose) => s.kind === "delegation")
      .map((s: Loose) => [s.tool, s.coworker, s.input, s.output]);
    expect(delegations).toEqual([
      ["delegate_work", "Researcher", "Find two facts", "Tides follow the moon."],
      ["ask_coworker", "Writer", "Say it plainly", "The moon pulls the sea."],
    ]);
  });

  it("refuses a hierarchical crew without a manager at apply", async () => {
    const refused = await suite.applyCrew(crew("unmanaged", "")).then(
      () => "",
      (err: { stderr?: string }) => String(err.stderr ?? err),
    );
    expect(refused).toMatch(/Crew "unmanaged" is invalid: .*process hierarchical needs a manager/);
  });
});
