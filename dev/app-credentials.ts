import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { mintAppCredential } from "../core/app-credential.ts";
import { appCredentialExpiry, assignmentUsesApps, declaredApps } from "../core/crew-apps.ts";
import type { CrewSpec } from "../core/crew.ts";
import type { AppsSettings } from "../core/execution-apps.ts";
import type { Requester } from "../core/execution.ts";
import type { TaskAssignment } from "../core/task-assignment.ts";
import type { Logger } from "../core/logger.ts";
import type { Fetch } from "../platform/outbound/outbound-fetch.ts";

/**
 * What the controller's AppCredentials does, in process: an execution whose crew declares apps gets its credential
 * minted when it starts, into a file only this user can read (`<work dir>/<execution>/apps-credential`, mode 0600)
 * that the task processes of agents with apps are pointed at; when it finishes, the credential is revoked at the
 * integrations service and the file removed. The settings are read when needed: the integrations service `kubecrew dev`
 * runs itself has its URL once the dev server listens.
 */
export class LocalAppCredentials {
  private readonly files = new Map<string, Promise<string>>();
  private readonly o: { settings: () => AppsSettings; workRoot: string; fetch: Fetch; log: Logger };

  constructor(options: { settings: () => AppsSettings; workRoot: string; fetch: Fetch; log: Logger }) {
    this.o = options;
  }

  /**
   * The runner environment of a task: the apps' URL and credential file when its agent, or an agent it may delegate
   * to (a whole run's every agent), has apps; else nothing.
   */
  async envFor(
    execution: { id: string; spec: CrewSpec; requestedBy: Requester | undefined; startTime: Date },
    assignment: Pick<TaskAssignment, "agent" | "coworkers">,
  ): Promise<Record<string, string>> {
    if (!assignmentUsesApps(assignment)) return {};
    let file = this.files.get(execution.id);
    if (!file) {
      file = this.mint(execution);
      this.files.set(execution.id, file);
    }
    return { KUBECREW_APPS_URL: this.o.settings().url, KUBECREW_APPS_CREDENTIAL_FILE: await file };
  }

  private async mint(execution: {
    id: string;
    spec: CrewSpec;
    requestedBy: Requester | undefined;
    startTime: Date;
  }): Promise<string> {
    const credential = await mintAppCredential(this.o.settings().signingKey, {
      executionUid: execution.id,
      execution: `dev/${execution.id}`,
      user: execution.requestedBy?.user ?? null,
      apps: declaredApps(execution.spec),
      expiresAt: appCredentialExpiry(execution.startTime, execution.spec),
    });
    const dir = join(this.o.workRoot, execution.id);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const file = join(dir, "apps-credential");
    await writeFile(file, credential, { mode: 0o600 });
    this.o.log.info({ execution: execution.id, user: execution.requestedBy?.user ?? null }, "App credential minted");
    return file;
  }

  /** A finished execution's credential: revoked, its file removed. Best effort: it expires at its deadline anyway. */
  async retire(execution: { id: string; spec: CrewSpec; startTime: string | undefined }): Promise<void> {
    const file = this.files.get(execution.id);
    if (!file) return;
    this.files.delete(execution.id);
    await rm(await file.catch(() => ""), { force: true }).catch(() => undefined);
    const revoke = this.o.settings().revoke;
    if (!revoke || !execution.startTime) return;
    try {
      const res = await this.o.fetch(`${revoke.integrationsUrl}/v1/internal/app-credentials/revoke`, {
        method: "POST",
        headers: { authorization: `Bearer ${revoke.internalApiKey}`, "content-type": "application/json" },
        body: JSON.stringify({
          executionUid: execution.id,
          expiresAt: appCredentialExpiry(execution.startTime, execution.spec).toISOString(),
        }),
        signal: AbortSignal.timeout(5_000),
      });
      await res.body?.cancel();
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
    } catch (err) {
      this.o.log.warn({ execution: execution.id, err: String(err) }, "Could not revoke the app credential");
    }
  }
}
