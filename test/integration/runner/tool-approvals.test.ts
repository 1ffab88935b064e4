import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { generateText, stepCountIs, tool, type ModelMessage, type ToolSet } from "ai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { localPolicy } from "../../../core/outbound/policy.ts";
import { REDACTED } from "../../../core/tool-approval.ts";
import { createOutboundClient } from "../../../platform/outbound/outbound-fetch.ts";
import { HTTP_REQUEST_TOOL, httpRequest, httpRequestInput } from "../../../runner/http-request-tool.ts";
import { languageModelFor } from "../../../runner/llm.ts";
import {
  answersMessage,
  heldCalls,
  holdingTools,
  type IdentifyCall,
  type ParkedLoop,
} from "../../../runner/tool-approvals.ts";
import {
  answer,
  quoteToolResults,
  startLlmFixture,
  toolCalls,
  toolResultsSent,
  type LlmFixture,
} from "../../support/llm-fixture.ts";

// A held http_request in the AI SDK's real tool loop: the model (the LLM fixture, scripted) asks for a POST that the
// policy holds; the receiving server (real, on loopback) gets nothing until a person's answer, the call once after
// an approval, nothing after a denial; the parked conversation goes through JSON as it would through a pod's end.

let site: Server;
let siteHost: string;
const received: { method: string; body: string }[] = [];
let llm: LlmFixture;
const { fetch } = createOutboundClient(localPolicy);

beforeAll(async () => {
  site = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push({ method: req.method!, body: Buffer.concat(chunks).toString("utf8") });
      res.writeHead(201, { "content-type": "text/plain" }).end("order placed");
    });
  });
  await new Promise<void>((resolve) => site.listen(0, "127.0.0.1", resolve));
  siteHost = `127.0.0.1:${(site.address() as AddressInfo).port}`;
  llm = await startLlmFixture();
});
afterAll(async () => {
  site.closeAllConnections();
  await new Promise((resolve) => site.close(resolve));
  await llm.stop();
});
beforeEach(() => {
  received.length = 0;
  llm.requests.length = 0;
});

const identify: IdentifyCall = (name, input) =>
  name === HTTP_REQUEST_TOOL ? { source: "http", method: (input as { method: string }).method } : undefined;

function loop(messages: ModelMessage[]) {
  const tools: ToolSet = {
    [HTTP_REQUEST_TOOL]: tool({
      description: "http",
      inputSchema: httpRequestInput,
      execute: (input) => httpRequest(input, { fetch, allowedHosts: [siteHost] }),
    }),
  };
  const model = languageModelFor({ provider: "openai-compatible", model: "m", baseURL: llm.baseURL }, {}, fetch);
  return generateText({
    model,
    messages,
    tools: holdingTools(tools, ["http_request:POST"], identify),
    stopWhen: stepCountIs(5),
    maxRetries: 0,
  });
}

/** Runs the loop until it parks: what a task's result would keep (through JSON, as storage keeps it). */
async function park(): Promise<ParkedLoop> {
  const url = `http://${siteHost}/orders`;
  llm.enqueue(
    toolCalls({ name: HTTP_REQUEST_TOOL, input: { method: "GET", url } }),
    toolCalls({
      name: HTTP_REQUEST_TOOL,
      input: { method: "POST", url, headers: { Authorization: "Bearer sk-live-1" }, body: "2 chairs" },
    }),
  );
  const start: ModelMessage[] = [{ role: "user", content: "Order two chairs" }];
  const result = await loop(start);
  const held = heldCalls(result.content, identify);
  return JSON.parse(JSON.stringify({ messages: [...start, ...result.response.messages], held })) as ParkedLoop;
}

describe("a held tool call", () => {
  it("is not made before a person answers; the person sees it with its secrets redacted", async () => {
    const parked = await park();
    expect(received.map((r) => r.method)).toEqual(["GET"]); // the GET is not held, the POST is
    expect(llm.requests).toHaveLength(2);
    expect(parked.held).toEqual([
      expect.objectContaining({
        tool: "http_request:POST",
        toolName: HTTP_REQUEST_TOOL,
        shownArguments: {
          method: "POST",
          url: `http://${siteHost}/orders`,
          headers: { Authorization: REDACTED },
          body: "2 chairs",
        },
      }),
    ]);
    expect(answersMessage(parked.held, [])).toBeUndefined();
  });

  it("approved: the call is made once, the loop goes on from where it stopped with its result", async () => {
    const parked = await park();
    llm.enqueue(quoteToolResults());
    const answers = [{ toolCallId: parked.held[0]!.toolCallId, approve: true, by: "ann", feedback: "" }];
    const result = await loop([...parked.messages, answersMessage(parked.held, answers)!]);
    expect(received.map((r) => [r.method, r.body])).toEqual([
      ["GET", ""],
      ["POST", "2 chairs"],
    ]);
    expect(llm.requests).toHaveLength(3); // no turn asked again: the conversation went on
    expect(result.text).toContain("order placed");
    expect(toolResultsSent(llm.requests.at(-1)!.body).map((r) => r.text)).toHaveLength(2);
  });

  it("denied: the call is never made and the model is told who denied it and why", async () => {
    const parked = await park();
    llm.enqueue(answer("I did not order."));
    const answers = [{ toolCallId: parked.held[0]!.toolCallId, approve: false, by: "ann", feedback: "too dear" }];
    const result = await loop([...parked.messages, answersMessage(parked.held, answers)!]);
    expect(received.map((r) => r.method)).toEqual(["GET"]);
    expect(result.text).toBe("I did not order.");
    expect(toolResultsSent(llm.requests.at(-1)!.body).at(-1)).toEqual({
      name: HTTP_REQUEST_TOOL,
      text: "denied by ann: too dear",
    });
  });
});
