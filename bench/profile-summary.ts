/**
 * The functions a V8 CPU profile (.cpuprofile, as `--cpu-prof` or the inspector writes it) spent its time in: the
 * top ones by self time and by inclusive time (a function counted once per sample however deep it recurses), as
 * shares of the busy samples (idle left out) and, given the requests the profile covers, microseconds per request.
 * Several profiles (one per round) are added together.
 *   node bench/profile-summary.ts [--requests N] [--top 25] <file.cpuprofile>...
 */
import { readFileSync } from "node:fs";
import { relative } from "node:path";
import { parseArgs } from "node:util";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { requests: { type: "string" }, top: { type: "string", default: "25" } },
});
const top = Number(values.top);
const requests = values.requests ? Number(values.requests) : undefined;

const self = new Map<string, number>();
const inclusive = new Map<string, number>();
let totalUs = 0;
let idleUs = 0;
const add = (map: Map<string, number>, key: string, us: number) => map.set(key, (map.get(key) ?? 0) + us);

const where = (frame: ProfileNode["callFrame"]) => {
  const url = frame.url.replace(/^file:\/\//, "");
  const file = url.includes("node_modules/")
    ? url.slice(url.lastIndexOf("node_modules/") + "node_modules/".length)
    : url.startsWith("/")
      ? relative(process.cwd(), url)
      : url;
  return `${frame.functionName || "(anonymous)"} ${file ? `${file}:${frame.lineNumber + 1}` : ""}`.trim();
};

for (const file of positionals) {
  const profile = JSON.parse(readFileSync(file, "utf8")) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  profile.samples.forEach((id, i) => {
    // A sample's time is the delta to the next sample (V8's convention: timeDeltas[i] precedes samples[i]).
    const us = profile.timeDeltas[i + 1] ?? 0;
    // Idle is the event loop waiting: not CPU, left out of every share.
    if (byId.get(id)!.callFrame.functionName === "(idle)") {
      idleUs += us;
      return;
    }
    totalUs += us;
    add(self, where(byId.get(id)!.callFrame), us);
    const seen = new Set<string>();
    for (let node: number | undefined = id; node !== undefined; node = parent.get(node)) {
      const key = where(byId.get(node)!.callFrame);
      if (!seen.has(key)) add(inclusive, key, us);
      seen.add(key);
    }
  });
}

const line = (key: string, us: number) =>
  `  ${((100 * us) / totalUs).toFixed(1).padStart(5)}%` +
  (requests ? ` ${(us / requests).toFixed(1).padStart(7)} µs/req` : "") +
  `  ${key}`;
const show = (title: string, map: Map<string, number>) => {
  console.log(title);
  for (const [key, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(line(key, us));
};
console.log(
  `${positionals.length} profile(s), ${(totalUs / 1e6).toFixed(2)} s busy (${(idleUs / 1e6).toFixed(2)} s idle)` +
    (requests ? `, ${requests} requests: ${(totalUs / requests).toFixed(0)} µs busy per request` : ""),
);
show("self time", self);
show("inclusive time", inclusive);
