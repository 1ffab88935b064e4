/**
 * The "installed system" mode of the e2e suite, chosen by E2E_API_URL (hack/kind-e2e.sh sets it after `helm install`):
 * no controller process and no in-process API; the suite talks to the installed API, applies its crews into the
 * release namespace the installed controller watches, and expects the chart's runner service account.
 *
 *   E2E_API_URL                  the installed API (e.g. through the Ingress)
 *   E2E_ADMIN_KEY                the release Secret's admin-key, to mint an org token through /admin/tokens
 *   E2E_NAMESPACE                the release namespace
 *   E2E_RUNNER_SERVICE_ACCOUNT   the runner's service account there (default kubecrew-runner)
 *   E2E_INTEGRATIONS_URL         optional: the integrations service (e.g. <API host>/oauthsvc)
 *   E2E_HOST_ADDRESS             optional: this machine's address as the cluster's pods reach it (webhook receivers)
 */
import { z } from "zod";

const installedEnv = z.object({
  E2E_API_URL: z.url().transform((url) => url.replace(/\/+$/, "")),
  E2E_ADMIN_KEY: z.string().min(1),
  E2E_NAMESPACE: z.string().min(1),
  E2E_RUNNER_SERVICE_ACCOUNT: z.string().min(1).default("kubecrew-runner"),
  E2E_INTEGRATIONS_URL: z
    .url()
    .transform((url) => url.replace(/\/+$/, ""))
    .optional(),
  E2E_HOST_ADDRESS: z.union([z.ipv4(), z.ipv6()]).optional(),
});

export interface InstalledSystem {
  apiUrl: string;
  adminKey: string;
  namespace: string;
  runnerServiceAccount: string;
  integrationsUrl?: string;
  hostAddress?: string;
}

function parseInstalled(env: NodeJS.ProcessEnv): InstalledSystem | undefined {
  if (!env.E2E_API_URL) return undefined;
  const parsed = installedEnv.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`e2e installed mode: ${String(issue.path[0])}: ${issue.message}`);
  }
  const e = parsed.data;
  return {
    apiUrl: e.E2E_API_URL,
    adminKey: e.E2E_ADMIN_KEY,
    namespace: e.E2E_NAMESPACE,
    runnerServiceAccount: e.E2E_RUNNER_SERVICE_ACCOUNT,
    ...(e.E2E_INTEGRATIONS_URL ? { integrationsUrl: e.E2E_INTEGRATIONS_URL } : {}),
    ...(e.E2E_HOST_ADDRESS ? { hostAddress: e.E2E_HOST_ADDRESS } : {}),
  };
}

/** The installed system under test, or undefined in the default mode (the suite starts its own controller and API). */
export const installedSystem: InstalledSystem | undefined = parseInstalled(process.env);
/** For `describe.skipIf(installed)`: tests that kill, restart or read the metrics of their own controller process. */
export const installed = installedSystem !== undefined;

/**
 * The address this process's own servers (webhook receivers, the LLM and MCP fixtures) listen on so that the cluster's
 * pods reach them: loopback for the suite's own controller and the local node's processes, this machine's address on
 * the cluster's network (E2E_HOST_ADDRESS) for an installed system in real containers.
 */
export function hostForPods(): string {
  if (!installedSystem) return "127.0.0.1";
  if (!installedSystem.hostAddress)
    throw new Error("e2e installed mode: E2E_HOST_ADDRESS is needed (servers pods call)");
  return installedSystem.hostAddress;
}

/** Mints an org token for every crew through the admin API; answers the bearer token and its subject. */
export async function mintOrgToken(system: InstalledSystem): Promise<{ token: string; subject: string }> {
  const res = await fetch(`${system.apiUrl}/admin/tokens`, {
    method: "POST",
    headers: { "X-Admin-Key": system.adminKey, "Content-Type": "application/json" },
    body: JSON.stringify({ kind: "org", crews: "*" }),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`POST /admin/tokens: ${res.status} ${text.slice(0, 300)}`);
  const body = JSON.parse(text) as { token: string; subject: string };
  return { token: body.token, subject: body.subject };
}
