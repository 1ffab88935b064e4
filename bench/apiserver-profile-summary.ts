/**
 * Where kube-apiserver spent its CPU: Go CPU profiles (pprof, as `/debug/pprof/profile` serves them with the local
 * cluster's KUBECREW_CLUSTER_PROFILING=1) split two ways, as shares of all samples and, given the executions the
 * profiles cover, milliseconds per execution:
 *   - by what the work was, each sample counted once: in the first of `OWNERS` its stack passes through, else in the
 *     group of its innermost frame that one of `INNERMOST` names;
 *   - by where it was done (a sample counted in every `WHERE` row its stack passes through: these overlap).
 * Several profiles (one per window of a phase) are added together by `go tool pprof`.
 *   node bench/apiserver-profile-summary.ts [--executions N] [--top 30] <profile.pb>...
 *   node bench/apiserver-profile-summary.ts --traces [--executions N] <file in `go tool pprof -traces` form>...
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";

/**
 * Subsystems that are called and return (they never wrap a request's other work): a sample whose stack passes through
 * one of them is its, in this order — so the JSON that the field manager or a patch library does, or the CEL of an
 * admission policy, counts there.
 */
export const OWNERS: [group: string, frame: RegExp][] = [
  ["GC (background mark and sweep)", /^runtime\.(gcBgMarkWorker|bgsweep|bgscavenge)/],
  ["authentication", /k8s\.io\/apiserver\/pkg\/authentication\//],
  ["authorization (RBAC)", /k8s\.io\/apiserver\/pkg\/authorization\/|plugin\/pkg\/auth\/authorizer/],
  ["etcd client (gRPC)", /go\.etcd\.io\/etcd|google\.golang\.org\/grpc/],
  [
    "admission (plugins and policies)",
    /k8s\.io\/apiserver\/pkg\/admission|k8s\.io\/kubernetes\/plugin\/pkg\/admission/,
  ],
  [
    "CRD rules (CEL)",
    /google\/cel-go|apiextensions-apiserver\/pkg\/apiserver\/schema\/cel|k8s\.io\/apiserver\/pkg\/cel/,
  ],
  [
    "CRD schema: validation, pruning, defaulting",
    /apiextensions-apiserver\/pkg\/apiserver\/(validation|schema)|kube-openapi\/pkg\/validation/,
  ],
  ["managedFields (field manager, structured-merge-diff)", /structured-merge-diff|managedfields|fieldmanager/],
  ["merge patch (the json-patch library)", /json-patch|strategicpatch/],
];

/**
 * What the rest was, by the innermost frame that one of these names (the Go runtime's own frames name nothing): a write
 * to the socket under a JSON encoder is the socket's, an allocation or a map insert counts where it was made. Samples
 * of none of them are the Go runtime's own (its scheduler, idle network polling) or other.
 */
export const INNERMOST: [group: string, frame: RegExp][] = [
  ["network (syscalls)", /^syscall\.|^internal\/poll\.|^net\.|^runtime\.netpoll|^internal\/runtime\/syscall/],
  ["crypto (TLS)", /^crypto\//],
  [
    "JSON encode/decode",
    /encoding\/json|sigs\.k8s\.io\/json|json-iterator|serializer\/json|unstructuredJSONScheme|apimachinery\/pkg\/util\/json/,
  ],
  [
    "protobuf encode/decode (built-in kinds)",
    /serializer\/protobuf|gogo\/protobuf|google\.golang\.org\/protobuf|^k8s\.io\/api\/.*\)\.(Unmarshal|Marshal|MarshalToSizedBuffer|Size)$|^k8s\.io\/apimachinery\/pkg\/.*\)\.(Unmarshal|Marshal|MarshalToSizedBuffer|Size)$/,
  ],
  [
    "conversion, defaulting, deep copy",
    /DeepCopy|pkg\/conversion|\.Convert_|SetObjectDefaults|SetDefaults_|runtime\.\(\*Scheme\)/,
  ],
  [
    "built-in validation and strategies",
    /k8s\.io\/kubernetes\/pkg\/apis\/.*\/validation|apimachinery\/pkg\/api\/validation|k8s\.io\/kubernetes\/pkg\/registry/,
  ],
  ["watch cache and dispatch (filters, fan-out)", /pkg\/storage\/cacher\.(?!\(\*CacheDelegator\))/],
  ["storage (etcd3 store, transformers)", /pkg\/storage\/etcd3|pkg\/storage\/value/],
  [
    "metrics, audit, logging",
    /prometheus|component-base\/metrics|pkg\/endpoints\/metrics|apiserver\/pkg\/audit|k8s\.io\/klog/,
  ],
  [
    "request handling (handlers, filters, net/http, http2)",
    /^net\/http|golang\.org\/x\/net\/http2|pkg\/endpoints|pkg\/server\/filters|registry\/generic\/registry/,
  ],
];

/** Where the work was done: request handlers by verb, CRDs against built-in kinds, watches and the watch cache. */
export const WHERE: [place: string, frame: RegExp, unless?: RegExp][] = [
  [
    "custom resources (crdHandler)",
    /apiextensions-apiserver\/pkg\/(apiserver\.\(\*crdHandler\)|registry\/customresource)/,
  ],
  ["create (POST)", /endpoints\/handlers\.(createHandler|CreateResource|CreateNamedResource)/],
  ["patch (PATCH)", /endpoints\/handlers\.(PatchResource|\(\*patcher\))/],
  ["update (PUT)", /endpoints\/handlers\.UpdateResource/],
  ["delete (DELETE)", /endpoints\/handlers\.(DeleteResource|DeleteCollection)/],
  ["get and list", /endpoints\/handlers\.(GetResource|ListResource|getResourceHandler)/, /handlers\.handleWatch/],
  ["watch serving (encode and write events)", /endpoints\/handlers\.(\(\*WatchServer\)|serveWatch)/],
  [
    "watch cache (cacher: dispatch, filters; not the writes it passes on)",
    /pkg\/storage\/cacher\.(?!\(\*CacheDelegator\))/,
  ],
  ["watch cache consistency check (digests of the whole cache)", /cacher\.\(?\*?consistencyChecker\)?/],
  ["TLS (crypto/tls)", /^crypto\/tls/],
  ["allocation (mallocgc, GC assists)", /^runtime\.(mallocgc|gcAssistAlloc)/],
  ["GC background", /^runtime\.(gcBgMarkWorker|bgsweep|bgscavenge)/],
];

interface Trace {
  ms: number;
  frames: string[];
}

/** The samples of the profiles, merged: `go tool pprof -traces` prints each stack (leaf first) with its time. */
export function readTraces(text: string): Trace[] {
  const traces: Trace[] = [];
  let current: Trace | undefined;
  for (const line of text.split("\n")) {
    if (line.startsWith("-----------+")) {
      current = undefined;
      continue;
    }
    const head = /^\s*([\d.]+)(ns|us|µs|ms|s)\s+(\S.*)$/.exec(line);
    if (head && !current) {
      const unit = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000 }[head[2]!]!;
      current = { ms: Number(head[1]) * unit, frames: [frameName(head[3]!)] };
      traces.push(current);
    } else if (current && line.trim() && !line.trim().startsWith("bytes:")) {
      current.frames.push(frameName(line.trim()));
    }
  }
  return traces;
}

const frameName = (s: string) => s.replace(/\s+\(inline\)$/, "");

export interface Split {
  totalMs: number;
  work: [string, number][];
  where: [string, number][];
}

export function split(traces: Trace[]): Split {
  const work = new Map<string, number>();
  const where = new Map<string, number>();
  let totalMs = 0;
  for (const t of traces) {
    totalMs += t.ms;
    const group =
      OWNERS.find(([, re]) => t.frames.some((f) => re.test(f)))?.[0] ??
      t.frames.flatMap((f) => INNERMOST.find(([, re]) => re.test(f))?.[0] ?? [])[0] ??
      (t.frames.every((f) => /^(runtime|internal\/runtime)[./]/.test(f)) ? "Go runtime (scheduler)" : "other");
    work.set(group, (work.get(group) ?? 0) + t.ms);
    for (const [place, re, unless] of WHERE) {
      if (t.frames.some((f) => re.test(f)) && !(unless && t.frames.some((f) => unless.test(f))))
        where.set(place, (where.get(place) ?? 0) + t.ms);
    }
  }
  const sorted = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]);
  return {
    totalMs,
    work: sorted(work),
    where: WHERE.flatMap(([p]) => (where.has(p) ? [[p, where.get(p)!]] : [])) as [string, number][],
  };
}

if (import.meta.main) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      executions: { type: "string" },
      top: { type: "string", default: "30" },
      traces: { type: "boolean", default: false },
    },
  });
  if (positionals.length === 0) {
    console.error("usage: node bench/apiserver-profile-summary.ts [--traces] [--executions N] [--top 30] <file>...");
    process.exit(2);
  }
  const executions = values.executions ? Number(values.executions) : undefined;
  // --traces: the files are already `pprof -traces` text (e.g. perf samples of a stripped binary, symbolized from its
  // pclntab), not profiles.
  const text = values.traces
    ? positionals.map((f) => readFileSync(f, "utf8")).join("\n")
    : execFileSync("go", ["tool", "pprof", "-traces", ...positionals], {
        encoding: "utf8",
        maxBuffer: 1 << 30,
        stdio: ["ignore", "pipe", "ignore"],
      });
  const s = split(readTraces(text));
  const row = (name: string, ms: number) =>
    `  ${((ms / s.totalMs) * 100).toFixed(1).padStart(5)} %  ${executions ? `${(ms / executions).toFixed(2).padStart(6)} ms/execution  ` : ""}${name}`;
  console.log(
    `${positionals.length} file(s), ${(s.totalMs / 1000).toFixed(1)} s of CPU sampled` +
      (executions ? ` (${(s.totalMs / executions).toFixed(1)} ms per execution over ${executions})` : ""),
  );
  console.log("by what the work was (each sample once):");
  for (const [name, ms] of s.work) console.log(row(name, ms));
  console.log("by where it was done (overlapping):");
  for (const [name, ms] of s.where) console.log(row(name, ms));
  if (values.traces) process.exit(0);
  const top = execFileSync("go", ["tool", "pprof", "-top", "-cum", `-nodecount=${values.top}`, ...positionals], {
    encoding: "utf8",
    maxBuffer: 1 << 28,
    stdio: ["ignore", "pipe", "ignore"],
  });
  console.log(`top ${values.top} by inclusive time:`);
  const lines = top.split("\n");
  console.log(
    lines
      .slice(lines.findIndex((l) => l.trim().startsWith("flat")))
      .join("\n")
      .trimEnd(),
  );
}
