import { describe, expect, it } from "vitest";
import { silentLogger } from "../core/logger.ts";
import { decodeFlow, type CachedFlow } from "../kube/flow-objects.ts";
import { CREWS, FLOWS, resourcePath } from "../kube/resources.ts";
import type { KubeObject } from "../kube/runtime/client.ts";
import { Informer } from "../kube/runtime/informer.ts";
import type { Undecodable } from "../kube/runtime/undecodable.ts";
import { decodeCrew, type CachedCrew } from "../kube/typed-objects.ts";
import { RecordingKube } from "../test/support/recording-kube.ts";
import { FlowReconciler } from "./flow-reconciler.ts";

const NS = "team-a";
const flowsPath = resourcePath(FLOWS, NS);
const crewsPath = resourcePath(CREWS, NS);

const notesFlow = {
  apiVersion: "kubecrew.io/v1alpha1",
  kind: "Flow",
  metadata: { name: "notes", namespace: NS, uid: "u-1", generation: 1 },
  spec: {
    schema: "crewai.flow/v1",
    name: "NotesFlow",
    methods: {
      fetch: { start: true, do: { call: "tool", ref: "http_request", with: { method: "GET", url: "https://a.test" } } },
      notes: { listen: "fetch", do: { call: "crew", from_declaration: "crews/note_crew", inputs: { topic: "x" } } },
    },
  },
};

const noteCrew = (ready?: "True" | "False") => ({
  apiVersion: "kubecrew.io/v1alpha1",
  kind: "Crew",
  metadata: { name: "note-crew", namespace: NS },
  spec: {
    llm: { provider: "mock", model: "mock" },
    agents: [{ name: "scribe", role: "Scribe", goal: "Note", backstory: "" }],
    tasks: [{ name: "note", description: "Note {topic}", expectedOutput: "A note", agent: "scribe" }],
  },
  ...(ready
    ? {
        status: {
          conditions: [{ type: "Ready", status: ready, reason: "R", message: "bad crew", lastTransitionTime: "t" }],
        },
      }
    : {}),
});

async function reconcilerOn(kube: RecordingKube) {
  const log = silentLogger();
  const flows = new Informer<CachedFlow | Undecodable>({ client: kube, log, path: flowsPath, transform: decodeFlow });
  const crews = new Informer<CachedCrew | Undecodable>({ client: kube, log, path: crewsPath, transform: decodeCrew });
  for (const o of (await kube.list<KubeObject>(flowsPath)).items) flows.upsert(o);
  for (const o of (await kube.list<KubeObject>(crewsPath)).items) crews.upsert(o);
  const reconciler = new FlowReconciler({
    client: kube,
    flows,
    crews,
    events: { record: () => undefined },
    now: () => new Date("2026-11-27T03:00:00.000Z"),
  });
  const ready = async () => {
    await reconciler.reconcile(`${NS}/notes`);
    const flow = kube.stored(`${flowsPath}/notes`) as { status?: { conditions?: { type: string }[] } };
    return flow.status?.conditions?.find((c) => c.type === "Ready");
  };
  return { ready };
}

describe("a Flow whose crew comes from a declaration", () => {
  it("is Ready False while the Crew its path names is missing or not Ready, and Ready once it is", async () => {
    const kube = new RecordingKube();
    kube.seed(flowsPath, notesFlow);
    expect(await (await reconcilerOn(kube)).ready()).toMatchObject({
      status: "False",
      reason: "InvalidSpec",
      message:
        `methods.notes.do.from_declaration: the Crew "note-crew" (crews/note_crew) does not exist in namespace ${NS}; ` +
        "import it: kubecrew import crewai crews/note_crew --name note-crew | kubectl apply -f -",
    });
    // The tool method's Crew is kept meanwhile: it does not wait for the other.
    expect(kube.stored(`${crewsPath}/notes-fetch`)).toBeDefined();

    kube.seed(crewsPath, noteCrew("False"));
    expect(await (await reconcilerOn(kube)).ready()).toMatchObject({
      status: "False",
      message: 'methods.notes.do.from_declaration: the Crew "note-crew" (crews/note_crew) is not Ready: bad crew',
    });

    kube.seed(crewsPath, noteCrew("True"));
    expect(await (await reconcilerOn(kube)).ready()).toMatchObject({
      status: "True",
      message: "2 methods, 1 crews",
    });
  });
});
