import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { LlmConfig } from "../../../core/crew.ts";
import { buildTaskPrompt } from "../../../runner/prompt.ts";
import { DEFAULT_RETRY_POLICY } from "../../../runner/retry.ts";
import { runTask } from "../../../runner/run-task.ts";
import { testAssignment } from "../../../runner/test-assignment.ts";
import { answer, startLlmFixture, type LlmFixture } from "../../support/llm-fixture.ts";
import { createOutboundClient } from "../../../platform/outbound/outbound-fetch.ts";
import { localPolicy } from "../../../core/outbound/policy.ts";

// The real AI SDK providers, over HTTP, against the LLM fixture server.
let fixture: LlmFixture;
beforeAll(async () => {
  fixture = await startLlmFixture();
});
afterAll(() => fixture.stop());
beforeEach(() => {
  fixture.requests.length = 0;
});

const retry = { ...DEFAULT_RETRY_POLICY, initialDelayMs: 5, maxDelayMs: 20 };
/** The runner's own outbound client (a task pod's policy: loopback allowed, metadata and link-local refused). */
const { fetch } = createOutboundClient(localPolicy);

/** The system and user texts a request carried, whatever the API's shape. */
function promptOf(body: Record<string, unknown>): { system: string; user: string } {
  const messages = body.messages as { role: string; content: string | { type: string; text: string }[] }[];
  const text = (c: string | { text: string }[]) => (typeof c === "string" ? c : c.map((p) => p.text).join(""));
  const system =
    typeof body.system === "string"
      ? body.system
      : Array.isArray(body.system)
        ? text(body.system as { text: string }[])
        : text(messages.find((m) => m.role === "system")!.content);
  return { system, user: text(messages.find((m) => m.role === "user")!.content) };
}

describe.each([
  {
    provider: "openai" as const,
    env: { OPENAI_API_KEY: "sk-openai-test" },
    path: "/v1/chat/completions",
    credential: (h: Record<string, unknown>) => h.authorization,
    expected: "Bearer sk-openai-test",
  },
  {
    provider: "openai-compatible" as const,
    env: { KUBECREW_OPENAI_COMPATIBLE_API_KEY: "local-key" },
    path: "/v1/chat/completions",
    credential: (h: Record<string, unknown>) => h.authorization,
    expected: "Bearer local-key",
  },
  {
    provider: "anthropic" as const,
    env: { ANTHROPIC_API_KEY: "sk-ant-test" },
    path: "/v1/messages",
    credential: (h: Record<string, unknown>) => h["x-api-key"],
    expected: "sk-ant-test",
  },
])("provider $provider", ({ provider, env, path, credential, expected }) => {
  const llm = (): LlmConfig => ({
    provider,
    model: "test-model",
    baseURL: fixture.baseURL,
    temperature: 0.2,
    maxOutputTokens: 700,
  });

  it("runs the task: the answer, its token usage, the model and the time", async () => {
    fixture.enqueue(answer("A fine article about agents.", { inputTokens: 321, outputTokens: 45 }));
    const outcome = await runTask(testAssignment({ llm: llm() }), { env, retry, fetch });
    expect(outcome).toMatchObject({
      taskName: "write",
      agent: "Senior Writer",
      output: "A fine article about agents.",
      tokenUsage: { inputTokens: 321, outputTokens: 45, totalTokens: 366 },
      model: `${provider}/test-model`,
    });
    expect(outcome.error).toBeUndefined();
    expect(outcome.executionTime).toBeGreaterThan(0);
    expect(fixture.requests).toHaveLength(1);
    expect(fixture.requests[0]!.path).toBe(path);
    expect(fixture.requests[0]!.body).toMatchObject({ model: "test-model", temperature: 0.2, max_tokens: 700 });
  });

  it("sends the agent's role, goal and backstory, the task and the context", async () => {
    const assignment = testAssignment({ llm: llm() });
    await runTask(assignment, { env, retry, fetch });
    const { system, user } = promptOf(fixture.requests[0]!.body);
    expect({ system, user }).toEqual(buildTaskPrompt(assignment));
    expect(system).toContain("Senior Writer");
    expect(user).toContain("Write a short article about AI agents.");
    expect(user).toContain("Agents plan, act and observe.");
  });

  it("sends the API key from the environment, KUBECREW_LLM_API_KEY first", async () => {
    await runTask(testAssignment({ llm: llm() }), { env, retry, fetch });
    expect(credential(fixture.requests[0]!.headers)).toBe(expected);
    await runTask(testAssignment({ llm: llm() }), {
      env: { ...env, KUBECREW_LLM_API_KEY: "from-secret" },
      retry,
      fetch,
    });
    expect(credential(fixture.requests[1]!.headers)).toBe(
      provider === "anthropic" ? "from-secret" : "Bearer from-secret",
    );
  });

  it("reads the key from the variable the agent names", async () => {
    await runTask(testAssignment({ llm: { ...llm(), apiKeyEnv: "TEAM_LLM_KEY" } }), {
      env: { TEAM_LLM_KEY: "team" },
      retry,
      fetch,
    });
    expect(credential(fixture.requests[0]!.headers)).toBe(provider === "anthropic" ? "team" : "Bearer team");
  });
});

describe("provider openai-compatible without a key (Ollama, vLLM)", () => {
  it("sends no Authorization header", async () => {
    const llm: LlmConfig = { provider: "openai-compatible", model: "llama3", baseURL: fixture.baseURL };
    const outcome = await runTask(testAssignment({ llm }), { env: {}, retry, fetch });
    expect(outcome.output).toBe("Fixture answer.");
    expect(fixture.requests[0]!.headers.authorization).toBeUndefined();
  });
});

describe("a base URL the outbound URL policy refuses", () => {
  it("fails the task naming the refusal, without connecting", async () => {
    // A name that resolves to the cloud metadata address, as a crew author's hostile base URL would.
    const metadata = createOutboundClient(localPolicy, {
      resolver: async () => [{ address: "169.254.169.254", family: 4 }],
    });
    const port = new URL(fixture.baseURL).port;
    const llm: LlmConfig = { provider: "openai-compatible", model: "m", baseURL: `http://llm.test:${port}/v1` };
    const outcome = await runTask(testAssignment({ llm }), { env: {}, retry, fetch: metadata.fetch });
    expect(outcome.error).toBe(
      "LLM call to openai-compatible/m failed: llm.test resolves to 169.254.169.254: " +
        "169.254.169.254 is a cloud metadata address; calls to it are refused",
    );
    expect(fixture.requests).toHaveLength(0);
    const literal = await runTask(testAssignment({ llm: { ...llm, baseURL: "http://169.254.169.254/v1" } }), {
      env: {},
      retry,
      fetch,
    });
    expect(literal.error).toContain("169.254.169.254 is a cloud metadata address; calls to it are refused");
    await metadata.close();
  });
});
