import { createHash } from "node:crypto";

/**
 * Every key this service writes (in Redis, or the memory store under `kubecrew dev`). Bearer-like values (session ids,
 * states) appear only as SHA-256 hashes.
 */
export interface RedisKeys {
  connectSession(sessionId: string): string;
  signInState(state: string): string;
  connection(connectionId: string): string;
  userConnections(userId: string): string;
  refreshLock(connectionId: string): string;
  revokedAppCredential(executionUid: string): string;
}

export function sha256(value: string): string {
  return createHash("sha256").update(value).digest("hex");
}

export function redisKeys(prefix: string): RedisKeys {
  return {
    connectSession: (sessionId) => `${prefix}connect-session:${sha256(sessionId)}`,
    signInState: (state) => `${prefix}state:${sha256(state)}`,
    connection: (connectionId) => `${prefix}connection:${connectionId}`,
    userConnections: (userId) => `${prefix}user:${encodeURIComponent(userId)}`,
    refreshLock: (connectionId) => `${prefix}refresh-lock:${connectionId}`,
    revokedAppCredential: (executionUid) => `${prefix}revoked-app-credential:${sha256(executionUid)}`,
  };
}
