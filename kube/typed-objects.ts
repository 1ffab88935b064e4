import { API_VERSION } from "../core/api-group.ts";
import { crewStatus, type Crew } from "../core/crew.ts";
import { decodeCrewSpec } from "../core/crew-status.ts";
import { executionSpec, executionStatus, type CrewExecution, type ExecutionStatus } from "../core/execution.ts";
import { sameJson } from "../core/json.ts";
import { schemaProblems } from "../core/schema-problems.ts";
import { taskResultSpec, type CrewTaskResult } from "../core/task-result.ts";
import type { CrewSpecSnapshots } from "./crew-spec-snapshots.ts";
import type { KubeObject } from "./runtime/client.ts";
import { undecodable, type Undecodable } from "./runtime/undecodable.ts";

/**
 * kubecrew's objects as the informer caches keep them: decoded once, as they enter a cache (its transform), into the
 * types of the zod schemas — spec and status parsed, defaults filled in — with the metadata the cache kept of them.
 * An object that does not decode is kept as Undecodable (its problems, one line each) and reported once by its
 * reconciler; readers pass it by. The callers trim what they do not read first (the API's and the controller's
 * caches keep different parts of the metadata).
 */

/**
 * What a cache keeps of a part that decoded: the part as it came when decoding changed nothing (the usual case: the
 * writers write what these schemas produced), else the decoded part (defaults filled in, unknown fields gone). An
 * object JSON.parse built holds its fields in itself; one built field by field, as a parser's output is, takes a
 * second block for its fields past the fourth — with 10,000 executions cached, that is most of the difference.
 */
function kept<T>(raw: unknown, decoded: T): T {
  return sameJson(raw, decoded) ? (raw as T) : decoded;
}

/** The metadata a cache keeps (at least the name). */
export type CachedMeta = NonNullable<KubeObject["metadata"]> & { name: string };

export type CachedCrew = Omit<Crew, "metadata"> & { metadata: CachedMeta };
export type CachedExecution = Omit<CrewExecution, "metadata"> & { metadata: CachedMeta };
/** A result without its apiVersion and kind (nobody reads them; a cache holds one result per task run). */
export type CachedTaskResult = Pick<CrewTaskResult, "spec"> & { metadata: CachedMeta };

/** A Crew: its spec decoded; a status that does not decode counts as none (the crew reconciler writes it anew). */
export function decodeCrew(object: KubeObject): CachedCrew | Undecodable {
  const decoded = decodeCrewSpec(object.spec);
  if (!decoded.spec) return undecodable(object, decoded.problems);
  if (!object.metadata?.name) return undecodable(object, ["metadata.name: Required"]);
  const status = crewStatus.safeParse(object.status);
  return {
    apiVersion: API_VERSION,
    kind: "Crew",
    metadata: object.metadata as CachedMeta,
    spec: kept(object.spec, decoded.spec),
    ...(status.success && status.data ? { status: kept(object.status, status.data) } : {}),
  };
}

/** An execution's status without its crew snapshot, which is decoded once per distinct snapshot. */
const statusWithoutSnapshot = executionStatus.omit({ crewSpec: true });

/**
 * A CrewExecution: its spec and status decoded, the status's crew snapshot shared with every execution of the same
 * crew version (`snapshots`).
 */
export function executionDecoder(snapshots: CrewSpecSnapshots): (object: KubeObject) => CachedExecution | Undecodable {
  return (object) => {
    const spec = executionSpec.safeParse(object.spec);
    const rawStatus = object.status as { crewSpec?: unknown } | undefined;
    const snapshot = rawStatus?.crewSpec === undefined ? undefined : snapshots.decode(rawStatus.crewSpec);
    let status: ReturnType<typeof statusWithoutSnapshot.safeParse> | undefined;
    let statusAsCame: object | undefined;
    if (rawStatus !== undefined) {
      const { crewSpec: _snapshot, ...rest } = rawStatus;
      status = statusWithoutSnapshot.safeParse(rest);
      statusAsCame = rest;
    }
    const problems = [
      ...(spec.success ? [] : schemaProblems(spec.error, "spec")),
      ...(status && !status.success ? schemaProblems(status.error, "status") : []),
      ...(snapshot?.problems ?? []).map((p) => `status.crewSpec.${p}`),
      ...(object.metadata?.name ? [] : ["metadata.name: Required"]),
    ];
    if (problems.length > 0 || !spec.success) return undecodable(object, problems);
    let decodedStatus: ExecutionStatus | undefined;
    if (status?.success) {
      // The status as it came is this cache's own object: the shared snapshot takes the place of its own copy.
      decodedStatus = sameJson(statusAsCame, status.data) ? (rawStatus as ExecutionStatus) : status.data;
      if (snapshot?.spec) decodedStatus.crewSpec = snapshot.spec;
    }
    return {
      apiVersion: API_VERSION,
      kind: "CrewExecution",
      metadata: object.metadata as CachedMeta,
      spec: kept(object.spec, spec.data),
      ...(decodedStatus ? { status: decodedStatus } : {}),
    };
  };
}

/** A CrewTaskResult: its spec (the runner's report: outputs and steps) decoded. */
export function decodeTaskResult(object: KubeObject): CachedTaskResult | Undecodable {
  const spec = taskResultSpec.safeParse(object.spec);
  if (!spec.success) return undecodable(object, schemaProblems(spec.error, "spec"));
  if (!object.metadata?.name) return undecodable(object, ["metadata.name: Required"]);
  return { metadata: object.metadata as CachedMeta, spec: kept(object.spec, spec.data) };
}
