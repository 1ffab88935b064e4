import { expect, it } from "vitest";
import { decoratedMethodsOfCrewPy, processFromCrewPy } from "./crew-py.ts";

it("reads the process crew.py passes its Crew, and says when it cannot be read without running Python", () => {
  const crew = (args: string) => `@crew\ndef crew(self) -> Crew:\n    return Crew(agents=self.agents, ${args})\n`;
  expect(processFromCrewPy(crew("process=Process.hierarchical, verbose=True"))).toEqual({ process: "hierarchical" });
  expect(processFromCrewPy(crew('process = "sequential"'))).toEqual({ process: "sequential" });
  expect(processFromCrewPy(crew("verbose=True"))).toEqual({});
  expect(processFromCrewPy(crew("process=self.chosen_process()"))).toEqual({
    note: 'sets the process as "process=self.chosen_process()", which cannot be read without running it: the crew runs sequential',
  });
  expect(processFromCrewPy(crew("process=Process.sequential") + crew("process=Process.hierarchical")).note).toMatch(
    /"process=Process.sequential", "process=Process.hierarchical", which cannot be read/,
  );
});

it("lists crew.py's @task and @llm methods in the order they are written, other decorators between allowed", () => {
  const source = [
    "class C:",
    "    @agent",
    "    def writer(self) -> Agent: ...",
    "    @task",
    "    def outline(self) -> Task: ...",
    "",
    "    @task  # the draft",
    "    @some_other_decorator",
    "    def draft(self) -> Task: ...",
    "    def helper_task(self): ...",
    "    @llm",
    "    def house_model(self) -> LLM: ...",
  ].join("\n");
  expect(decoratedMethodsOfCrewPy(source, "task")).toEqual(["outline", "draft"]);
  expect(decoratedMethodsOfCrewPy(source, "llm")).toEqual(["house_model"]);
});
