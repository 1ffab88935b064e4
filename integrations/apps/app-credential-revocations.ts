import type { Redis } from "ioredis";
import type { RedisKeys } from "../redis-keys.ts";

/**
 * Credentials of finished executions: the controller revokes an execution's app credential when it finishes; the
 * revocation is kept (a Redis key expiring with the credential) so /v1/mcp refuses it until it would expire anyway.
 */
export function createAppCredentialRevocations(redis: Redis, keys: RedisKeys, now: () => Date) {
  return {
    async revoke(executionUid: string, expiresAt: Date): Promise<void> {
      // A credential already past its expiry is refused as expired; nothing to keep.
      if (expiresAt.getTime() <= now().getTime()) return;
      await redis.set(keys.revokedAppCredential(executionUid), "1", "PXAT", expiresAt.getTime());
    },
    async isRevoked(executionUid: string): Promise<boolean> {
      return (await redis.exists(keys.revokedAppCredential(executionUid))) === 1;
    },
  };
}
export type AppCredentialRevocations = ReturnType<typeof createAppCredentialRevocations>;
