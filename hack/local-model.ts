/**
 * `node hack/local-model.ts`: the real model npm test's model project runs (`kubecrew model pull`'s default,
 * SmolLM2-135M-Instruct), pulled once into the cache outside the clone (test/support/local-model.ts names the folder).
 * A warm cache only has the file's SHA-256 checked: nothing is fetched.
 */
import { lookup } from "node:dns/promises";
import { pullModel } from "../cli/model-pull.ts";
import { findPackageIndex } from "../cli/package-index.ts";
import { DEFAULT_LOCAL_MODEL, MODEL_DIR_ENV } from "../core/local-models.ts";
import { runnerPolicyFromEnv } from "../core/outbound/config.ts";
import { createOutboundClient, type Fetch } from "../platform/outbound/outbound-fetch.ts";
import { testModelDir } from "../test/support/local-model.ts";

const env = { ...process.env, [MODEL_DIR_ENV]: testModelDir(process.env) };
let client: ReturnType<typeof createOutboundClient> | undefined;
/** Made on the first request only: a warm cache makes none. */
const fetch: Fetch = async (input, init) => {
  if (!client) {
    // Some machines that run npm test reach the package index through a gateway at a reserved address, which the
    // outbound policy refuses by default: the addresses of the index pip would use are allowed for this pull
    // (KUBECREW_OUTBOUND_ALLOW as `kubecrew model pull` reads it, plus those).
    const policy = runnerPolicyFromEnv(process.env);
    const index = await findPackageIndex(env);
    const host = index && URL.canParse(index.url) ? new URL(index.url).hostname : undefined;
    const addresses = host ? await lookup(host, { all: true }).catch(() => []) : [];
    client = createOutboundClient({ ...policy, allow: [...policy.allow, ...addresses.map((a) => a.address)] });
  }
  return client.fetch(input, init);
};
const started = Date.now();
try {
  const pulled = await pullModel(DEFAULT_LOCAL_MODEL, { env, fetch });
  const took = `${((Date.now() - started) / 1000).toFixed(1)} s`;
  console.log(`local model: ${pulled.cached ? "in the cache" : `pulled in ${took}`}: ${pulled.path}`);
} finally {
  await client?.close();
}
