/**
 * The chart carries copies of files that live elsewhere in the repository, because Helm reads nothing outside the
 * chart directory: the CRDs of crds/ (rendered by templates/crds.yaml behind crds.enabled) and the example crew of
 * examples/ (templates/example-crew.yaml). `node hack/sync-chart-files.ts` copies them; `--check` only reports
 * drift, and hack/sync-chart-files.test.ts fails while there is any.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

export const REPO = join(dirname(fileURLToPath(import.meta.url)), "..");
/** The chart's copies, relative to the repository. */
export const CHART_FILES = join("charts", "kubecrew", "files");

export interface ChartCopy {
  /** Path of the original, relative to the repository. */
  source: string;
  /** Path of the chart's copy, relative to the repository. */
  copy: string;
}

/** Every file the chart must hold a byte-for-byte copy of. */
export function chartCopies(repo = REPO): ChartCopy[] {
  const chartFiles = CHART_FILES;
  const crds = readdirSync(join(repo, "crds"))
    .filter((file) => file.endsWith(".yaml"))
    .sort()
    .map((file) => ({ source: join("crds", file), copy: join(chartFiles, "crds", file) }));
  return [
    ...crds,
    { source: join("examples", "research-crew.yaml"), copy: join(chartFiles, "examples", "research-crew.yaml") },
  ];
}

/** Copies that differ from their original or are missing, and chart CRD files whose original is gone. */
export function chartDrift(repo = REPO): string[] {
  const copies = chartCopies(repo);
  const drift = copies
    .filter(
      ({ source, copy }) =>
        !existsSync(join(repo, copy)) || !readFileSync(join(repo, copy)).equals(readFileSync(join(repo, source))),
    )
    .map(({ source, copy }) => `${copy} differs from ${source}`);
  const expected = new Set(copies.map(({ copy }) => copy));
  const chartCrds = join(CHART_FILES, "crds");
  if (existsSync(join(repo, chartCrds))) {
    for (const file of readdirSync(join(repo, chartCrds))) {
      if (!expected.has(join(chartCrds, file))) drift.push(`${join(chartCrds, file)} has no original in crds/`);
    }
  }
  return drift;
}

export function syncChartFiles(repo = REPO): string[] {
  const copies = chartCopies(repo);
  const changed: string[] = [];
  const chartCrds = join(repo, CHART_FILES, "crds");
  if (existsSync(chartCrds)) {
    for (const file of readdirSync(chartCrds)) {
      const path = join(chartCrds, file);
      if (!copies.some(({ copy }) => join(repo, copy) === path)) {
        rmSync(path);
        changed.push(relative(repo, path));
      }
    }
  }
  for (const { source, copy } of copies) {
    const data = readFileSync(join(repo, source));
    const target = join(repo, copy);
    if (existsSync(target) && readFileSync(target).equals(data)) continue;
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, data);
    changed.push(copy);
  }
  return changed;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (process.argv.includes("--check")) {
    const drift = chartDrift();
    for (const line of drift) console.error(line);
    if (drift.length > 0) {
      console.error("run: node hack/sync-chart-files.ts");
      process.exit(1);
    }
  } else {
    const changed = syncChartFiles();
    console.log(changed.length ? `updated ${changed.join(", ")}` : "chart files are up to date");
  }
}
