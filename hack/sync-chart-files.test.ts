import { cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CHART_FILES, chartCopies, chartDrift, REPO, syncChartFiles } from "./sync-chart-files.ts";

describe("the chart's copies of crds/ and the example crew", () => {
  it("are identical to the originals (run `node hack/sync-chart-files.ts` after changing them)", () => {
    expect(chartDrift()).toEqual([]);
  });

  it("include every CRD of crds/", () => {
    const crds = chartCopies().filter(({ source }) => source.startsWith("crds/"));
    expect(crds.map(({ source }) => source)).toEqual([
      "crds/crewexecutions.yaml",
      "crds/crews.yaml",
      "crds/crewtaskresults.yaml",
      "crds/flowexecutions.yaml",
      "crds/flows.yaml",
    ]);
  });

  describe("in a scratch copy of the repository", () => {
    let scratch: string | undefined;
    afterEach(() => {
      if (scratch) rmSync(scratch, { recursive: true, force: true });
    });
    const makeScratch = () => {
      scratch = mkdtempSync(join(tmpdir(), "kubecrew-sync-"));
      for (const dir of ["crds", "examples", CHART_FILES])
        cpSync(join(REPO, dir), join(scratch, dir), { recursive: true });
      return scratch;
    };

    it("a changed CRD is reported, and syncing brings the copy back in line", () => {
      const repo = makeScratch();
      writeFileSync(join(repo, "crds", "crews.yaml"), "# changed\n");
      expect(chartDrift(repo)).toEqual(["charts/kubecrew/files/crds/crews.yaml differs from crds/crews.yaml"]);
      expect(syncChartFiles(repo)).toEqual(["charts/kubecrew/files/crds/crews.yaml"]);
      expect(chartDrift(repo)).toEqual([]);
    });

    it("a CRD removed from crds/ is reported and removed from the chart", () => {
      const repo = makeScratch();
      rmSync(join(repo, "crds", "crewtaskresults.yaml"));
      expect(chartDrift(repo)).toEqual(["charts/kubecrew/files/crds/crewtaskresults.yaml has no original in crds/"]);
      syncChartFiles(repo);
      expect(chartDrift(repo)).toEqual([]);
    });
  });
});
