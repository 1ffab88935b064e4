import { mintAppCredential } from "../core/app-credential.ts";
import { appCredentialExpiry, declaredApps } from "../core/crew-apps.ts";
import type { AppsSettings } from "../core/execution-apps.ts";
import type { CrewSpec } from "../core/crew.ts";
import type { Requester } from "../core/execution.ts";
import type { Logger } from "../core/logger.ts";
import type { Fetch } from "../platform/outbound/outbound-fetch.ts";
import { APPS_CREDENTIAL_KEY, appsSecretName } from "../kube/apps-secret.ts";
import type { KubeApi, KubeObject } from "../kube/runtime/client.ts";
import { LABEL_CREW, LABEL_EXECUTION, LABEL_MANAGED_BY, MANAGED_BY, resourcePath, SECRETS } from "../kube/resources.ts";
import { createIfAbsent, deleteIfPresent } from "../kube/apply.ts";
import { executionOwner, type ExecutionRef } from "./task-job.ts";

/** How long the revocation call may take before the reconcile gives up and retries later. */
const REVOKE_TIMEOUT_MS = 5_000;

/**
 * The execution-scoped app credential of an execution whose crew declares apps: minted when its first task starts
 * into the Secret `<execution>-apps` (owned by the execution, so it goes with it), mounted into the task pods of
 * agents with apps; when the execution finishes, revoked at the integrations service and the Secret deleted. One
 * Secret per execution, not per task: one create and one delete per execution.
 */
export class AppCredentials {
  private readonly o: { client: KubeApi; settings: AppsSettings; fetch: Fetch; log: Logger };
  /** Executions (by uid) whose credential this process already retired. */
  private readonly retired = new Set<string>();

  constructor(options: { client: KubeApi; settings: AppsSettings; fetch: Fetch; log: Logger }) {
    this.o = options;
  }

  get url(): string {
    return this.o.settings.url;
  }

  /** Creates the execution's credential Secret unless it exists; a no-op for a crew without apps. */
  async ensure(ref: ExecutionRef, spec: CrewSpec, requestedBy: Requester | undefined, startTime: Date): Promise<void> {
    const apps = declaredApps(spec);
    if (apps.length === 0) return;
    const credential = await mintAppCredential(this.o.settings.signingKey, {
      executionUid: ref.uid,
      execution: `${ref.namespace}/${ref.name}`,
      user: requestedBy?.user ?? null,
      apps,
      expiresAt: appCredentialExpiry(startTime, spec),
    });
    const secret: KubeObject & { type: string; stringData: Record<string, string> } = {
      apiVersion: SECRETS.apiVersion,
      kind: SECRETS.kind,
      metadata: {
        name: appsSecretName(ref.name),
        namespace: ref.namespace,
        labels: { [LABEL_EXECUTION]: ref.name, [LABEL_CREW]: ref.crew, [LABEL_MANAGED_BY]: MANAGED_BY },
        ownerReferences: [executionOwner(ref)],
      },
      type: "Opaque",
      stringData: { [APPS_CREDENTIAL_KEY]: credential },
    };
    if (await createIfAbsent(this.o.client, resourcePath(SECRETS, ref.namespace), secret)) {
      this.o.log.info({ execution: ref.name, apps, user: requestedBy?.user ?? null }, "App credential minted");
    }
  }

  /**
   * A finished execution's credential: revoked (so a pod still running cannot use it), then its Secret deleted.
   * Whichever controller process sees the finish does it, a restarted one too: it revokes only a credential not yet
   * expired (an expired one is refused anyway) and always deletes the Secret, so the Secret never waits for the
   * execution's deletion; both steps are idempotent, done once per execution in a process. A failing revocation
   * throws: the reconcile is retried with backoff.
   */
  async retire(ref: ExecutionRef, spec: CrewSpec, startTime: string | undefined, now: Date): Promise<void> {
    if (this.retired.has(ref.uid) || declaredApps(spec).length === 0 || !startTime) return;
    const expiresAt = appCredentialExpiry(startTime, spec);
    if (expiresAt > now) await this.revoke(ref, expiresAt);
    await deleteIfPresent(this.o.client, resourcePath(SECRETS, ref.namespace, appsSecretName(ref.name)));
    this.retired.add(ref.uid);
    if (this.retired.size > 10_000) this.retired.clear();
  }

  private async revoke(ref: ExecutionRef, expiresAt: Date): Promise<void> {
    const revoke = this.o.settings.revoke;
    if (!revoke) return;
    const res = await this.o.fetch(`${revoke.integrationsUrl}/v1/internal/app-credentials/revoke`, {
      method: "POST",
      headers: { authorization: `Bearer ${revoke.internalApiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ executionUid: ref.uid, expiresAt: expiresAt.toISOString() }),
      signal: AbortSignal.timeout(REVOKE_TIMEOUT_MS),
    });
    await res.body?.cancel();
    if (!res.ok) throw new Error(`revoking the app credential of ${ref.name} answered HTTP ${res.status}`);
    this.o.log.info({ execution: ref.name }, "App credential revoked");
  }
}
