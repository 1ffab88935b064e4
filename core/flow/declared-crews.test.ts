import { describe, expect, it } from "vitest";
import { flowDefinition } from "./definition.ts";
import { declaredCrewName, declaredCrewNames, declaredCrews } from "./declared-crews.ts";

describe("the Crew a from_declaration path names on a cluster", () => {
  it("is the folder's name, or the file's without its extension, as a DNS label", () => {
    expect(declaredCrewName("crews/research_crew")).toBe("research-crew");
    expect(declaredCrewName("./crews/research_crew/")).toBe("research-crew");
    expect(declaredCrewName("crews/research_crew/crew.jsonc")).toBe("research-crew");
    expect(declaredCrewName("writer.json")).toBe("writer");
    expect(declaredCrewName("Trend Watch.jsonc")).toBe("trend-watch");
    expect(declaredCrewName("..")).toBeUndefined();
    expect(declaredCrewName("___")).toBeUndefined();
  });

  it("is listed for every crew action that has one, in each steps too", () => {
    const definition = flowDefinition.parse({
      name: "F",
      methods: {
        a: { start: true, do: { call: "crew", from_declaration: "crews/research_crew", inputs: { topic: "x" } } },
        b: {
          listen: "a",
          do: {
            call: "each",
            in: "[1]",
            do: [{ name: "w", action: { call: "crew", from_declaration: "writer.jsonc" } }],
          },
        },
        c: { listen: "b", do: { call: "expression", expr: "1" } },
      },
    });
    expect(declaredCrews(definition)).toEqual([
      { place: { method: "a" }, at: "methods.a.do", path: "crews/research_crew", crew: "research-crew" },
      { place: { method: "b", step: "w" }, at: "methods.b.do.w.do", path: "writer.jsonc", crew: "writer" },
    ]);
    expect(declaredCrewNames(definition)).toEqual(["research-crew", "writer"]);
    expect(declaredCrewNames({ not: "a flow" })).toEqual([]);
  });
});
