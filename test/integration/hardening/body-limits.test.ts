import { afterAll, beforeAll, expect, it } from "vitest";
import { silentLogger } from "../../../core/logger.ts";
import { devConfigSchema } from "../../../dev/config.ts";
import { startDev, type RunningDev } from "../../../dev/start.ts";

// Issue 28 item 5: each 413 names its own limit. /admin/* (16 KiB) and /console/sign-in (4 KiB) said the crew
// routes' 1 MiB limit, so a caller sending 20 KB was told it was under the limit it broke.

const adminKey = "admin-key-for-body-limit-tests-0123456789";
let dev: RunningDev;

beforeAll(async () => {
  // As `npm start` runs it (tokens in memory, the admin API mounted), with an admin key.
  const config = devConfigSchema.parse({ PORT: "0", HOST: "127.0.0.1", KUBECREW_ADMIN_KEY: adminKey });
  dev = await startDev(config, silentLogger());
});
afterAll(() => dev?.stop());

async function post(path: string, bytes: number, headers: Record<string, string> = {}) {
  const res = await fetch(`${dev.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ pad: "x".repeat(bytes) }),
  });
  return { status: res.status, body: (await res.json()) as unknown };
}

it.each([
  ["/admin/tokens", 16 * 1024, () => ({ "x-admin-key": adminKey })],
  ["/console/sign-in", 4 * 1024, () => ({})],
  ["/kickoff", 1024 * 1024, () => ({ authorization: `Bearer ${dev.orgToken}` })],
])("POST %s above its %d byte limit: 413 naming that limit", async (path, limit, headers) => {
  expect(await post(path, limit + 100, headers())).toEqual({
    status: 413,
    body: { error: "Payload Too Large", message: `Request body is larger than the ${limit} byte limit` },
  });
});
