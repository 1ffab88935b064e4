import { describe, expect, it } from "vitest";
import { buildTaskPrompt, CONTEXT_DIVIDER } from "./prompt.ts";
import { testAssignment } from "./test-assignment.ts";

describe("buildTaskPrompt", () => {
  it("puts role, backstory and goal in the system message as CrewAI does", () => {
    const { system } = buildTaskPrompt(testAssignment());
    expect(system).toBe(
      "You are Senior Writer. You have written for technical magazines for ten years.\n" +
        "Your personal goal is: Explain AI agents clearly",
    );
  });

  it("leaves no dangling space when the backstory is empty", () => {
    const a = testAssignment();
    const { system } = buildTaskPrompt({ ...a, agent: { ...a.agent, backstory: "" } });
    expect(system).toBe("You are Senior Writer.\nYour personal goal is: Explain AI agents clearly");
  });

  it("gives the task, the expected output and the context in the user message", () => {
    const { user } = buildTaskPrompt(testAssignment());
    expect(user).toBe(
      "Current Task: Write a short article about AI agents.\n\n" +
        "This is the expected criteria for your final answer: Three paragraphs in markdown.\n" +
        "you MUST return the actual complete content as the final answer, not a summary.\n\n" +
        "This is the context you're working with:\nAgents plan, act and observe.\n\n" +
        "Begin! This is VERY important to you, give your best Final Answer, your job depends on it!",
    );
  });

  it("joins several context outputs in order with CrewAI's divider", () => {
    const { user } = buildTaskPrompt(
      testAssignment({
        context: [
          { task: "research", output: "first output" },
          { task: "outline", output: "second output" },
        ],
      }),
    );
    expect(user).toContain(`This is the context you're working with:\nfirst output${CONTEXT_DIVIDER}second output\n\n`);
  });

  it("has no context section for a task without context", () => {
    const { user } = buildTaskPrompt(testAssignment({ context: [] }));
    expect(user).not.toContain("context you're working with");
    expect(user).toContain("not a summary.\n\nBegin!");
  });

  it("keeps braces in texts as they are (interpolation happened before)", () => {
    const a = testAssignment();
    const { user } = buildTaskPrompt({ ...a, task: { ...a.task, description: 'Answer as JSON: {"title": "..."}' } });
    expect(user).toContain('Current Task: Answer as JSON: {"title": "..."}');
  });
});
