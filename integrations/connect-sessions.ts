import { randomBytes } from "node:crypto";
import { z } from "zod";
import type { RedisKeys } from "./redis-keys.ts";
import type { IntegrationsStore } from "./store.ts";

/** What the rest of the system asked for: this user connects this product, then returns there. */
export const connectRequestSchema = z.object({
  userId: z.string().min(1).max(256),
  provider: z.string().min(1).max(64),
  product: z.string().min(1).max(64),
  returnUrl: z.string().max(4096),
});
export type ConnectRequest = z.infer<typeof connectRequestSchema>;

/** A sign-in in progress, waiting for the provider's callback; the nonce is set for OpenID Connect providers. */
export interface PendingSignIn extends ConnectRequest {
  nonce?: string;
}

const pendingSignInSchema = connectRequestSchema.extend({ nonce: z.string().optional() });

/**
 * Connect sessions (created by the internal API, opened once by the user's browser) and sign-in states (created by
 * the start route, consumed once by the callback). Both are single use: the store's take() hands each out at most once.
 */
export function createSignInStore(store: IntegrationsStore, keys: RedisKeys) {
  async function take<T>(key: string, schema: z.ZodType<T>): Promise<T | undefined> {
    const raw = await store.take(key);
    if (raw === undefined) return undefined;
    const parsed = schema.safeParse(JSON.parse(raw));
    return parsed.success ? parsed.data : undefined;
  }
  return {
    async createConnectSession(request: ConnectRequest, ttlSeconds: number): Promise<string> {
      const sessionId = randomBytes(32).toString("base64url");
      await store.putFor(keys.connectSession(sessionId), JSON.stringify(request), ttlSeconds * 1000);
      return sessionId;
    },
    takeConnectSession(sessionId: string): Promise<ConnectRequest | undefined> {
      return take(keys.connectSession(sessionId), connectRequestSchema);
    },
    async savePendingSignIn(state: string, pending: PendingSignIn, ttlSeconds: number): Promise<void> {
      await store.putFor(keys.signInState(state), JSON.stringify(pending), ttlSeconds * 1000);
    },
    takePendingSignIn(state: string): Promise<PendingSignIn | undefined> {
      return take(keys.signInState(state), pendingSignInSchema) as Promise<PendingSignIn | undefined>;
    },
  };
}
export type SignInStore = ReturnType<typeof createSignInStore>;
