import { describe, expect, it } from "vitest";
import { crewSpec } from "./crew-resource.ts";
import { buildAssignment } from "./assignment.ts";
import type { DecideInput } from "./decision.ts";

const agents = [{ name: "writer", role: "Writer", goal: "Write" }];
const task = { name: "write", agent: "writer", description: "Write", expectedOutput: "Text" };

/** The messages of a rejected spec, or [] when it is accepted. */
function problems(fields: Record<string, unknown>, runtime = "crewai"): string[] {
  const result = crewSpec.safeParse({ agents, tasks: [{ ...task, ...fields }], runtime });
  return result.success ? [] : result.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
}

describe("a task's Python references", () => {
  const python = {
    tools: ["latest_ai_development.tools.custom_tool.MyCustomTool", "my_tools.search"],
    outputPydantic: "my_project.models.Report",
    guardrail: "my_project.checks.has_title",
  };

  it("accepts module.attribute references on the crewai runtime and hands them to the task's assignment", () => {
    expect(problems({ python })).toEqual([]);
    const spec = crewSpec.parse({ agents, tasks: [{ ...task, python }], runtime: "crewai" });
    const input = { execution: { name: "x1", spec: { crewRef: { name: "c" }, inputs: {} } } } as unknown as DecideInput;
    expect(buildAssignment(input, spec, 0).task.python).toEqual(python);
  });

  it("refuses a reference that is not module.attribute, naming the field and the reference's form", () => {
    for (const bad of ["search", "my tools.search", "tools.", "1mod.x", "mod:Class", "a..b"]) {
      expect(problems({ python: { tools: [bad] } }), bad).toEqual([
        "tasks.0.python.tools.0: must be a Python reference module.attribute (e.g. my_project.tools.custom_tool.MyCustomTool)",
      ]);
    }
    expect(problems({ python: { outputPydantic: "Report" } })[0]).toMatch(/^tasks\.0\.python\.outputPydantic: must be/);
    expect(problems({ python: { guardrail: "a.b c" } })[0]).toMatch(/^tasks\.0\.python\.guardrail: must be/);
  });

  it("refuses Python references on the kubecrew runtime, and two structured outputs or guardrails of one task", () => {
    expect(problems({ python }, "kubecrew")).toEqual([
      ': task "write": python names Python code, which only the crewai runtime imports: set spec.runtime to crewai and spec.runner.image to an image holding the code',
    ]);
    expect(problems({ python, outputJson: { type: "object" }, guardrail: "Has a title." })).toEqual([
      ': task "write": python.outputPydantic and outputJson are both set: CrewAI takes one structured output, keep one',
      ': task "write": python.guardrail and guardrail or guardrails are both set: keep the function or the rules',
    ]);
  });
});
