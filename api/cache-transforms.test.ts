import pino from "pino";
import { describe, expect, it } from "vitest";
import { crewSpec } from "../core/crew-resource.ts";
import { ANNOTATION_IDEMPOTENCY_KEY, ANNOTATION_IDEMPOTENCY_REQUEST } from "../kube/resources.ts";
import { CrewSpecSnapshots } from "../kube/crew-spec-snapshots.ts";
import type { KubeObject } from "../kube/runtime/client.ts";
import { isUndecodable } from "../kube/runtime/undecodable.ts";
import { crewForCache, executionForCache, resultForCache } from "./cache-transforms.ts";

const managedFields = [{ manager: "kubectl", operation: "Update", fieldsV1: { "f:spec": { "f:tasks": {} } } }];
const metadata = {
  name: "a",
  namespace: "team",
  uid: "u-1",
  generation: 2,
  resourceVersion: "42",
  creationTimestamp: "2026-11-23T10:00:00Z",
  labels: { "kubecrew.io/crew": "notes" },
  managedFields,
  ownerReferences: [{ apiVersion: "v1", kind: "X", name: "x", uid: "x-1" }],
  finalizers: ["f"],
};
const snapshot = () => ({
  tasks: [{ name: "step1", agent: "writer", description: "Write", expectedOutput: "Notes" }],
  agents: [{ name: "writer", role: "W", goal: "Write" }],
});
/** A snapshot as decoding fills it in (the crew schema's defaults). */
const decodedSnapshot = (spec: unknown) => crewSpec.parse(spec);
const agent = { name: "writer", role: "W", goal: "Write" };
const crewSpecBody = {
  agents: [agent],
  tasks: [{ name: "one", agent: "writer", description: "d", expectedOutput: "o" }],
};
const execution = (name: string, crewSpec: unknown) => ({
  apiVersion: "kubecrew.io/v1alpha1",
  kind: "CrewExecution",
  metadata: {
    ...metadata,
    name,
    annotations: {
      [ANNOTATION_IDEMPOTENCY_KEY]: "k",
      [ANNOTATION_IDEMPOTENCY_REQUEST]: "r",
      "kubectl.kubernetes.io/last-applied-configuration": "{…}",
    },
  },
  spec: { crewRef: { name: "notes" }, inputs: { topic: "tides" } },
  status: { phase: "Succeeded", crewSpec },
});

describe("the API's cache transforms", () => {
  it("keep a Crew's spec, status and schema metadata, without managedFields or kubectl's last-applied copy", () => {
    const kept = crewForCache()({
      apiVersion: "kubecrew.io/v1alpha1",
      kind: "Crew",
      metadata: {
        ...metadata,
        annotations: { "kubectl.kubernetes.io/last-applied-configuration": "{…}", team: "blue" },
      },
      spec: crewSpecBody,
      status: { inputs: ["topic"] },
    });
    expect(kept).toEqual({
      apiVersion: "kubecrew.io/v1alpha1",
      kind: "Crew",
      metadata: {
        name: "a",
        namespace: "team",
        uid: "u-1",
        generation: 2,
        resourceVersion: "42",
        creationTimestamp: "2026-11-23T10:00:00Z",
        labels: { "kubecrew.io/crew": "notes" },
        annotations: { team: "blue" },
      },
      spec: crewSpec.parse(crewSpecBody),
      status: { inputs: ["topic"] },
    });
  });

  it("keep a Crew that breaks the schema as what is wrong with it, and log that once", () => {
    const lines: string[] = [];
    const log = pino({ level: "warn" }, { write: (line: string) => void lines.push(line) });
    const kept = crewForCache(log)({ metadata, spec: { ...crewSpecBody, tasks: [{ name: "one", agent: "ghost" }] } });
    expect(isUndecodable(kept) && kept.undecodable.length).toBeGreaterThan(0);
    expect(kept.metadata).toMatchObject({ name: "a", namespace: "team" });
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ msg: "Crew is invalid", crew: "a" });
  });

  it("keep a CrewExecution's spec, status and idempotency annotations, and share equal crew snapshots", () => {
    const transform = executionForCache(new CrewSpecSnapshots());
    const a = transform(execution("a", snapshot()));
    const b = transform(execution("b", snapshot()));
    expect(a.metadata).toEqual({
      name: "a",
      namespace: "team",
      uid: "u-1",
      generation: 2,
      resourceVersion: "42",
      creationTimestamp: "2026-11-23T10:00:00Z",
      labels: { "kubecrew.io/crew": "notes" },
      annotations: { [ANNOTATION_IDEMPOTENCY_KEY]: "k", [ANNOTATION_IDEMPOTENCY_REQUEST]: "r" },
    });
    if (isUndecodable(a)) throw new Error(a.undecodable.join("; "));
    expect(a.spec).toEqual({ crewRef: { name: "notes" }, inputs: { topic: "tides" }, stop: false });
    expect(a.status).toEqual({ phase: "Succeeded", crewSpec: decodedSnapshot(snapshot()) });
    const crewSpecOf = (o: KubeObject) => (o.status as { crewSpec: unknown }).crewSpec;
    expect(crewSpecOf(b)).toBe(crewSpecOf(a));
    const other = { ...snapshot(), tasks: [{ ...snapshot().tasks[0]!, name: "other" }] };
    const edited = transform(execution("c", other));
    expect(crewSpecOf(edited)).not.toBe(crewSpecOf(a));
    expect(crewSpecOf(edited)).toEqual(decodedSnapshot(other));
  });

  it("leave an execution without status or snapshot as it is", () => {
    const transform = executionForCache(new CrewSpecSnapshots());
    const { status: _none, ...pending } = execution("p", undefined);
    expect(transform(pending)).not.toHaveProperty("status");
    expect(transform({ ...pending, status: { phase: "Running" } }).status).toEqual({ phase: "Running" });
  });

  it("keep a CrewTaskResult's spec and the labels its index reads", () => {
    const spec = {
      executionRef: { name: "a" },
      taskName: "step1",
      taskIndex: 0,
      agent: "W",
      executionTime: 1,
      attempt: 1,
      output: "text",
    };
    const kept = resultForCache({
      apiVersion: "kubecrew.io/v1alpha1",
      kind: "CrewTaskResult",
      metadata: { ...metadata, labels: { "kubecrew.io/execution": "a" } },
      spec,
    });
    expect(kept.metadata?.labels).toEqual({ "kubecrew.io/execution": "a" });
    expect(kept.metadata).not.toHaveProperty("managedFields");
    expect(kept.metadata).not.toHaveProperty("ownerReferences");
    expect(kept.spec).toEqual(spec);
  });

  it("bound the number of snapshots kept", () => {
    const snapshots = new CrewSpecSnapshots(2);
    const first = snapshots.decode({ v: 1 });
    snapshots.decode({ v: 2 });
    snapshots.decode({ v: 3 });
    expect(snapshots.decode({ v: 1 })).not.toBe(first);
  });
});
