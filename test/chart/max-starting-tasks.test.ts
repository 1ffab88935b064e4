/**
 * The chart's limit on tasks starting at once (controller.maxStartingTasks): the controller gets 300 by default, the
 * value given (0: no limit), and the schema refuses what the controller would refuse at startup.
 */
import { describe, expect, it } from "vitest";
import { container, envValue, find, render, template } from "./support/helm.ts";

const limitOf = (values?: object) =>
  envValue(
    container(find(render(values ? { values } : {}), "Deployment", "kubecrew-controller")),
    "KUBECREW_CONTROLLER_MAX_STARTING_TASKS",
  );

describe("controller.maxStartingTasks", () => {
  it("hands the controller 300 by default, or the value given; 0 turns the limit off", () => {
    expect(limitOf()).toBe("300");
    expect(limitOf({ controller: { maxStartingTasks: 40 } })).toBe("40");
    expect(limitOf({ controller: { maxStartingTasks: 0 } })).toBe("0");
  });

  it("refuses a negative or fractional limit", () => {
    for (const maxStartingTasks of [-1, 2.5]) {
      const result = template({ values: { controller: { maxStartingTasks } } });
      expect(result.status).not.toBe(0);
      expect(result.stderr).toContain("maxStartingTasks");
    }
  });
});
