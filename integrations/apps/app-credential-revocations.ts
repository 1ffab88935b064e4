import type { RedisKeys } from "../redis-keys.ts";
import type { IntegrationsStore } from "../store.ts";

/**
 * Credentials of finished executions: the controller revokes an execution's app credential when it finishes; the
 * revocation is kept (a key expiring with the credential) so /v1/mcp refuses it until it would expire anyway.
 */
export function createAppCredentialRevocations(store: IntegrationsStore, keys: RedisKeys, now: () => Date) {
  return {
    async revoke(executionUid: string, expiresAt: Date): Promise<void> {
      // A credential already past its expiry is refused as expired; nothing to keep.
      if (expiresAt.getTime() <= now().getTime()) return;
      await store.putUntil(keys.revokedAppCredential(executionUid), "1", expiresAt.getTime());
    },
    async isRevoked(executionUid: string): Promise<boolean> {
      return store.exists(keys.revokedAppCredential(executionUid));
    },
  };
}
export type AppCredentialRevocations = ReturnType<typeof createAppCredentialRevocations>;
