import { afterAll, beforeAll } from "vitest";
import { parseAllDocuments } from "yaml";
import {
  applyCrew,
  crewNamespace,
  releaseCrewNamespace,
  startClusterApi,
  startControllerProcess,
  type ClusterApi,
  type ControllerProcess,
} from "./fixture.ts";
import { installedSystem } from "./installed.ts";
import { kubectl } from "./kubectl.ts";

export interface CrewSuiteOptions {
  /** The namespace's prefix (on the local node each file has a namespace of its own). */
  prefix: string;
  /** Started first and stopped last: the fixtures the crews name (an LLM fixture, an MCP server, a receiver). */
  before?: () => Promise<void>;
  after?: () => Promise<void>;
  /** Secrets the crews read, made before the crews as their owner would make them: name → key → value. */
  secrets?: Record<string, Record<string, string>>;
  /** The crews' manifests, read once `before` has run, so they can name its fixtures' addresses. */
  crews: () => string[];
  /** The identity of the suite's own controller (on the local node; on kind the chart's controller runs). */
  controllerIdentity?: string;
  /** Variables of the suite's own controller (on kind the chart's runs with the chart's). */
  controllerEnv?: Record<string, string>;
}

/** What a suite's tests use, filled in by its beforeAll. */
export interface CrewSuite {
  namespace: string;
  api: ClusterApi;
  controller: ControllerProcess | undefined;
  /** Applies a crew a test makes itself; it is deleted with the suite's own. */
  applyCrew(manifest: string): Promise<void>;
}

/**
 * The set-up most e2e files share: their namespace, their Secrets and crews applied, the suite's controller on the
 * local node (the chart's on kind), the API; torn down in reverse, the crews and Secrets deleted again on kind where
 * the namespace is the release's and stays.
 */
export function crewSuite(kubeconfig: string, options: CrewSuiteOptions): CrewSuite {
  let crewNames: string[] = [];
  const suite = {
    controller: undefined,
    async applyCrew(manifest: string) {
      crewNames.push(...parseAllDocuments(manifest).map((doc) => String(doc.getIn(["metadata", "name"]))));
      await applyCrew(kubeconfig, suite.namespace, manifest);
    },
  } as CrewSuite;
  beforeAll(async () => {
    await options.before?.();
    suite.namespace = await crewNamespace(kubeconfig, options.prefix);
    for (const [name, data] of Object.entries(options.secrets ?? {})) {
      const literals = Object.entries(data).map(([key, value]) => `--from-literal=${key}=${value}`);
      const manifest = await kubectl(kubeconfig, [
        ...["create", "secret", "generic", name, "-n", suite.namespace, ...literals],
        ...["--dry-run=client", "-o", "yaml"],
      ]);
      await kubectl(kubeconfig, ["apply", "-n", suite.namespace, "-f", "-"], manifest);
    }
    for (const manifest of options.crews()) await suite.applyCrew(manifest);
    if (!installedSystem) {
      suite.controller = await startControllerProcess(kubeconfig, suite.namespace, {
        ...(options.controllerIdentity ? { identity: options.controllerIdentity } : {}),
        ...(options.controllerEnv ? { env: options.controllerEnv } : {}),
      });
    }
    suite.api = await startClusterApi(kubeconfig, suite.namespace);
  });
  afterAll(async () => {
    await suite.api?.stop();
    await suite.controller?.kill("SIGTERM");
    await options.after?.();
    if (!suite.namespace) return;
    if (installedSystem) {
      if (crewNames.length > 0) {
        await kubectl(kubeconfig, ["delete", "crew", ...crewNames, "-n", suite.namespace, "--ignore-not-found"]);
      }
      const secrets = Object.keys(options.secrets ?? {});
      if (secrets.length > 0) {
        await kubectl(kubeconfig, ["delete", "secret", ...secrets, "-n", suite.namespace, "--ignore-not-found"]);
      }
    }
    crewNames = [];
    await releaseCrewNamespace(kubeconfig, suite.namespace);
  });
  return suite;
}
