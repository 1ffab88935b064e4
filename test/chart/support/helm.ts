import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import type { V1Container, V1ObjectMeta, V1PodTemplateSpec } from "@kubernetes/client-node";

export const repo = join(import.meta.dirname, "..", "..", "..");
export const chartDir = join(repo, "charts", "kubecrew");

/** The directory of the pinned Kubernetes test binaries (kubectl, helm), built by hack/tools.sh. */
export function toolsDir(): string {
  return execFileSync("bash", [join(repo, "hack", "tools.sh"), "path"], { encoding: "utf8" }).trim();
}

export interface CommandResult {
  status: number;
  stdout: string;
  stderr: string;
}

/** Runs the pinned helm; never throws, so tests can assert on failures. */
export function helm(args: string[], options: { env?: NodeJS.ProcessEnv; input?: string } = {}): CommandResult {
  const run = spawnSync(join(toolsDir(), "helm"), args, {
    cwd: repo,
    encoding: "utf8",
    input: options.input,
    // A private helm home: no repositories, plugins or caches of the machine's user leak in.
    env: {
      PATH: process.env.PATH,
      HOME: tmpdir(),
      HELM_CACHE_HOME: join(tmpdir(), "kubecrew-helm-cache"),
      ...options.env,
    },
    maxBuffer: 64 * 1024 * 1024,
  });
  return { status: run.status ?? 1, stdout: run.stdout, stderr: run.stderr };
}

/** Writes values to a temporary file for `--values` (JSON is YAML) and removes it afterwards. */
export function withValuesFile<T>(values: object, use: (file: string) => T): T {
  const dir = mkdtempSync(join(tmpdir(), "kubecrew-values-"));
  const file = join(dir, "values.yaml");
  writeFileSync(file, JSON.stringify(values));
  try {
    return use(file);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A rendered object; the fields tests look at. */
export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: V1ObjectMeta & { name: string };
  // Objects of every kind: each test narrows what it reads.
  [field: string]: unknown;
}

export interface RenderOptions {
  release?: string;
  namespace?: string;
  values?: object;
  extraArgs?: string[];
}

/** `helm template` output, unparsed, with its exit status. */
export function template(options: RenderOptions = {}): CommandResult {
  const { release = "kubecrew", namespace = "crews", values = {}, extraArgs = [] } = options;
  return withValuesFile(values, (file) =>
    helm(["template", release, chartDir, "--namespace", namespace, "--values", file, ...extraArgs]),
  );
}

/** `helm template` parsed into objects; fails the test with helm's message when rendering fails. */
export function render(options: RenderOptions = {}): Manifest[] {
  const result = template(options);
  if (result.status !== 0) throw new Error(`helm template failed: ${result.stderr}`);
  return parseManifests(result.stdout);
}

export function parseManifests(text: string): Manifest[] {
  return parseAllDocuments(text)
    .map((doc) => {
      if (doc.errors.length > 0) throw new Error(`rendered YAML does not parse: ${doc.errors[0]!.message}`);
      return doc.toJS() as Manifest | null;
    })
    .filter((m): m is Manifest => m !== null);
}

export function find(manifests: Manifest[], kind: string, name: string): Manifest {
  const found = manifests.find((m) => m.kind === kind && m.metadata.name === name);
  if (!found)
    throw new Error(`no ${kind} ${name} among ${manifests.map((m) => `${m.kind}/${m.metadata.name}`).join(", ")}`);
  return found;
}

export function ofKind(manifests: Manifest[], kind: string): Manifest[] {
  return manifests.filter((m) => m.kind === kind);
}

/** The pod template of a Deployment or StatefulSet. */
export function podTemplate(workload: Manifest): V1PodTemplateSpec {
  return (workload.spec as { template: V1PodTemplateSpec }).template;
}

export function container(workload: Manifest, name?: string): V1Container {
  const containers = podTemplate(workload).spec!.containers;
  const found = name ? containers.find((c) => c.name === name) : containers[0];
  if (!found) throw new Error(`${workload.metadata.name} has no container ${name}`);
  return found;
}

/** A container's env as name → entry. */
export function envOf(c: V1Container): Map<string, NonNullable<V1Container["env"]>[number]> {
  return new Map((c.env ?? []).map((e) => [e.name, e]));
}

/** A plain env value; throws when the variable is missing or comes from a reference. */
export function envValue(c: V1Container, name: string): string {
  const entry = envOf(c).get(name);
  if (entry?.value === undefined) throw new Error(`${c.name} has no plain value for ${name}`);
  return entry.value;
}
