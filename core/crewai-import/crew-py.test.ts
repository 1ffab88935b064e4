import { expect, it } from "vitest";
import { processFromCrewPy } from "./crew-py.ts";

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
