import { describe, expect, inject, it } from "vitest";
import { answer, startLlmFixture, type LlmFixture } from "../support/llm-fixture.ts";
import { crewSuite } from "./support/crew-suite.ts";
import { finalStatus, kickoff, resultsOf, waitFor, type Loose } from "./support/fixture.ts";
import { hostForPods } from "./support/installed.ts";
import { kubectl } from "./support/kubectl.ts";

/**
 * Structured outputs and guardrails on a real control plane: the task pods' runner validates the answer, sends it
 * back with the errors, and stores the object on its CrewTaskResult, whose schema (the CRD) takes it and the guardrail
 * steps; /status reports it as json_dict. An outputJson the CRD cannot judge (not a JSON Schema) makes the Crew not
 * Ready; a guardrail of two kinds is refused at apply. With the suite's controller on the local node, and against the
 * chart installed on kind (pods reach the fixture at this machine's address there).
 */
const kubeconfig = inject("kubeconfig");
let llm: LlmFixture;

const SCHEMA = {
  type: "object",
  properties: { claims: { type: "array", items: { type: "string" }, minItems: 1 } },
  required: ["claims"],
};
const RULE = "The summary cites a claim.";

const crew = (name: string, tasks: string) => `apiVersion: kubecrew.io/v1alpha1
kind: Crew
metadata: { name: ${name} }
spec:
  inputs: [{ name: topic }]
  llm: { provider: openai-compatible, model: fixture-model, baseURL: "${llm.baseURL}" }
  agents:
    - { name: analyst, role: Analyst, goal: "Understand {topic}" }
  tasks:
${tasks}
  runner: { retries: 0 }
`;

const suite = crewSuite(kubeconfig, {
  prefix: "structured",
  before: async () => {
    llm = await startLlmFixture(hostForPods());
  },
  after: () => llm?.stop(),
  crews: () => [
    crew(
      "structured",
      `    - { name: facts, agent: analyst, description: "Facts on {topic}", expectedOutput: Claims, outputJson: ${JSON.stringify(SCHEMA)} }
    - { name: summary, agent: analyst, description: "Summarise", expectedOutput: Text, guardrail: "${RULE}" }`,
    ),
  ],
});

describe("outputJson and guardrails in task pods", () => {
  it("retries the answer the schema refuses and the guardrail fails, stores the object, and /status reports json_dict", async () => {
    llm.enqueue(
      answer('{"claims": []}'),
      answer('{"claims": ["Tides follow the moon."]}'),
      answer("Tides happen."),
      answer('{"valid": false, "feedback": "No claim is cited."}'),
      answer("Tides follow the moon."),
      answer('{"valid": true, "feedback": ""}'),
    );
    const id = await kickoff(suite.api, "structured");
    const final = await finalStatus(suite.api, "structured", id, 120_000);
    expect(final.status, JSON.stringify(final)).toBe("completed");
    expect(final.result.tasks.map((t: Loose) => [t.task_id, t.json_dict])).toEqual([
      ["facts", { claims: ["Tides follow the moon."] }],
      ["summary", undefined],
    ]);
    expect(llm.requests).toHaveLength(6);
    expect(JSON.stringify(llm.requests[1]!.body)).toContain("/claims must NOT have fewer than 1 items");
    expect(JSON.stringify(llm.requests[2]!.body)).toContain('{\\"claims\\": [\\"Tides follow the moon.\\"]}');
    expect(JSON.stringify(llm.requests[4]!.body)).toContain("No claim is cited.");

    const results = (await resultsOf(kubeconfig, suite.namespace, id)).filter((r) => r.spec.output !== undefined);
    const facts = results.find((r) => r.spec.taskName === "facts");
    const summary = results.find((r) => r.spec.taskName === "summary");
    expect(facts.spec.jsonDict).toEqual({ claims: ["Tides follow the moon."] });
    const checks = (r: Loose) =>
      r.spec.steps.filter((s: Loose) => s.kind === "guardrail").map((s: Loose) => [s.input, s.output, s.error]);
    expect(checks(facts)).toEqual([
      ["outputJson", undefined, "/claims must NOT have fewer than 1 items"],
      ["outputJson", "passed", undefined],
    ]);
    expect(checks(summary)).toEqual([
      [`llm: ${RULE}`, undefined, "No claim is cited."],
      [`llm: ${RULE}`, "passed", undefined],
    ]);
  });

  it("refuses a guardrail of two kinds at apply, and reports an outputJson that is no JSON Schema on Ready", async () => {
    const twoKinds = crew(
      "twokinds",
      `    - { name: a, agent: analyst, description: d, expectedOutput: e, guardrails: [{ maxLength: 5, regex: x }] }`,
    );
    const refused = await suite.applyCrew(twoKinds).then(
      () => "",
      (err: { stderr?: string }) => String(err.stderr ?? err),
    );
    expect(refused).toMatch(
      /Crew "twokinds" is invalid: .*a guardrail needs exactly one of llm, jsonSchema, maxLength, regex/,
    );

    await suite.applyCrew(
      crew(
        "unschemed",
        `    - { name: a, agent: analyst, description: d, expectedOutput: e, outputJson: { type: object, required: a } }`,
      ),
    );
    const ready = await waitFor("crew unschemed reported not Ready", async () => {
      const got = JSON.parse(
        await kubectl(kubeconfig, ["get", "crew", "unschemed", "-n", suite.namespace, "-o", "json"]),
      );
      return got.status?.conditions?.find((c: Loose) => c.type === "Ready" && c.status === "False");
    });
    expect(ready.reason).toBe("InvalidSpec");
    expect(ready.message).toBe('task "a": outputJson is not a valid JSON Schema: /required must be array');
  });
});
