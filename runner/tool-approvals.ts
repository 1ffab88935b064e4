import type { ModelMessage, ToolModelMessage, ToolSet } from "ai";
import type { JsonObject } from "../core/json.ts";
import type { LoopResume, ParkedLoopRecord } from "../core/parked-loop.ts";
import {
  approvalToolName,
  denialText,
  needsApproval,
  redactArguments,
  type ToolCallIdentity,
} from "../core/tool-approval.ts";

/**
 * Held tool calls in the agent's loop (issue 32 item 4), on the AI SDK's own tool approvals: a tool the crew's
 * `toolPolicy.requireApproval` names gets `needsApproval`, so the loop ends before the call with an approval request
 * instead of calling it. The conversation so far (plain JSON) and the held calls are what the task is parked with; a
 * later run, maybe in another pod, continues the same conversation with the person's answers appended: approved, the
 * SDK makes the call (once) and the loop goes on; denied, the model gets "denied by <who>: <feedback>" as the result.
 */

/** What a person is asked about: one held call. `input` is the call's own arguments, kept to make the call later. */
export interface HeldCall {
  approvalId: string;
  toolCallId: string;
  /** The tool's name in the loop (what the model called). */
  toolName: string;
  /** The name the policy knows it by: `gmail/send_email`, `server#tool`, `http_request:POST`. */
  tool: string;
  input: unknown;
  /** The arguments as people are shown them: secrets redacted. */
  shownArguments: unknown;
}

/** A person's answer on a held call. */
export interface ApprovalAnswer {
  toolCallId: string;
  approve: boolean;
  /** Who decided, as the model is told on a denial. */
  by: string;
  feedback: string;
}

/** The parked loop: what continues it (JSON, kept with the task's result so that no pod waits). */
export interface ParkedLoop {
  messages: ModelMessage[];
  held: HeldCall[];
}

/** Which call a tool of the loop makes with an input, for the policy; undefined: the policy knows no such tool. */
export type IdentifyCall = (toolName: string, input: unknown) => ToolCallIdentity | undefined;

/** The tools with `needsApproval` set on each that the rules may hold (decided per call, on its input). */
export function holdingTools(tools: ToolSet, requireApproval: readonly string[], identify: IdentifyCall): ToolSet {
  if (requireApproval.length === 0) return tools;
  return Object.fromEntries(
    Object.entries(tools).map(([name, tool]) => [
      name,
      {
        ...tool,
        needsApproval: (input: unknown) => {
          const call = identify(name, input);
          return call !== undefined && needsApproval(requireApproval, call);
        },
      },
    ]),
  ) as ToolSet;
}

/**
 * The tools of a loop that cannot park (a coworker's, run inside the task's agent's turn): a call the rules hold is
 * refused, its refusal going back to the model as the tool's error, so that delegating never skips an approval.
 */
export function refusingHeldTools(tools: ToolSet, requireApproval: readonly string[], identify: IdentifyCall): ToolSet {
  if (requireApproval.length === 0) return tools;
  return Object.fromEntries(
    Object.entries(tools).map(([name, tool]) => {
      const execute = tool.execute;
      if (!execute) return [name, tool];
      return [
        name,
        {
          ...tool,
          execute: async (input: unknown, options: Parameters<typeof execute>[1]) => {
            const call = identify(name, input);
            if (call !== undefined && needsApproval(requireApproval, call)) {
              throw new Error(
                `${approvalToolName(call)} needs a person's approval (toolPolicy.requireApproval): ask the agent who delegated to you to make this call`,
              );
            }
            return execute(input as never, options);
          },
        },
      ];
    }),
  ) as ToolSet;
}

interface ContentPart {
  type: string;
  approvalId?: string;
  toolCall?: { toolCallId: string; toolName: string; input: unknown };
}

/** The calls a loop's last step holds for people (its approval requests), in the order the model made them. */
export function heldCalls(content: readonly ContentPart[], identify: IdentifyCall): HeldCall[] {
  return content.flatMap((part) => {
    if (part.type !== "tool-approval-request" || !part.toolCall || !part.approvalId) return [];
    const { toolCallId, toolName, input } = part.toolCall;
    const call = identify(toolName, input);
    return [
      {
        approvalId: part.approvalId,
        toolCallId,
        toolName,
        tool: call ? approvalToolName(call) : toolName,
        input,
        shownArguments: redactArguments(input),
      },
    ];
  });
}

/**
 * The message that continues a parked loop: the answer on each held call. Undefined while one is still unanswered
 * (the loop stays parked); an answer for a call the loop does not hold is ignored.
 */
export function answersMessage(
  held: readonly Pick<HeldCall, "approvalId" | "toolCallId">[],
  answers: readonly ApprovalAnswer[],
): ToolModelMessage | undefined {
  const content = held.map((call) => {
    const answer = answers.find((a) => a.toolCallId === call.toolCallId);
    return answer && { call, answer };
  });
  if (content.some((c) => c === undefined)) return undefined;
  return {
    role: "tool",
    content: content.map((c) => ({
      type: "tool-approval-response" as const,
      approvalId: c!.call.approvalId,
      approved: c!.answer.approve,
      ...(c!.answer.approve ? {} : { reason: denialText(c!.answer.by, c!.answer.feedback) }),
    })),
  };
}

/**
 * What a run parks with when its loop's last step holds calls: the conversation (the messages it was given and the
 * loop's own, as JSON) and each held call as people are shown it, without its raw arguments (the conversation has
 * them, to make the call once approved). Undefined: nothing is held.
 */
export function parkLoop(
  messages: readonly ModelMessage[],
  content: readonly ContentPart[],
  identify: IdentifyCall,
): ParkedLoopRecord | undefined {
  const held = heldCalls(content, identify);
  if (held.length === 0) return undefined;
  return {
    messages: JSON.parse(JSON.stringify(messages)) as JsonObject[],
    held: held.map((call) => ({
      approvalId: call.approvalId,
      toolCallId: call.toolCallId,
      toolName: call.toolName,
      tool: call.tool,
      shownArguments: asObject(call.shownArguments),
      ...(identify(call.toolName, call.input)?.source === "app" ? { appAction: true } : {}),
    })),
  };
}

/** The conversation a resumed run goes on with: the parked one and people's answers. Undefined: one is missing. */
export function resumedMessages(resume: LoopResume): ModelMessage[] | undefined {
  const answers = answersMessage(resume.held, resume.answers);
  return answers && [...(resume.messages as unknown as ModelMessage[]), answers];
}

/** A call's arguments as an object (what models send); anything else kept under `value`. */
function asObject(value: unknown): JsonObject {
  const json = JSON.parse(JSON.stringify(value ?? null)) as unknown;
  return json !== null && typeof json === "object" && !Array.isArray(json)
    ? (json as JsonObject)
    : { value: json as JsonObject[string] };
}
