import { timingSafeEqual } from "node:crypto";
import { newClientId, newToken, newTokenId, secretHash } from "./token-format.ts";
import {
  type ClientRecord,
  type NewClientRequest,
  type NewTokenRequest,
  tokenSubject,
  type TokenRecord,
} from "./token-store.ts";

/**
 * The records both token stores keep: a new token or client with its secret, built the same way whichever store
 * holds it. The stores only decide where the hashes and records live.
 */

/** A new org or user token; `expiresAt` (ms) only when the request asks for a lifetime. */
export function newTokenRecord(
  request: NewTokenRequest,
  now: number,
): { token: string; record: TokenRecord; expiresAt?: number } {
  const token = newToken(request.kind);
  const id = newTokenId();
  const expiresAt = request.ttlSeconds ? now + request.ttlSeconds * 1000 : undefined;
  const record: TokenRecord = {
    id,
    kind: request.kind,
    crews: request.crews,
    subject: tokenSubject(request, id),
    created: new Date(now).toISOString(),
    ...(expiresAt ? { expires: new Date(expiresAt).toISOString() } : {}),
  };
  return { token, record, ...(expiresAt ? { expiresAt } : {}) };
}

/** A new access token for an OAuth client, with the client's role and crews, expiring after `ttlSeconds`. */
export function newAccessTokenRecord(
  client: ClientRecord,
  ttlSeconds: number,
  now: number,
): { token: string; record: TokenRecord; expiresAt: number } {
  const token = newToken("access");
  const expiresAt = now + ttlSeconds * 1000;
  const record: TokenRecord = {
    id: newTokenId(),
    kind: client.role,
    crews: client.crews,
    subject: client.clientId,
    clientId: client.clientId,
    created: new Date(now).toISOString(),
    expires: new Date(expiresAt).toISOString(),
  };
  return { token, record, expiresAt };
}

/** A new OAuth client and its secret. */
export function newClientRecord(
  request: NewClientRequest,
  now: number,
): { clientSecret: string; record: ClientRecord } {
  const clientSecret = newToken("clientSecret");
  const record: ClientRecord = {
    clientId: newClientId(),
    role: request.role,
    crews: request.crews,
    ...(request.name ? { name: request.name } : {}),
    created: new Date(now).toISOString(),
  };
  return { clientSecret, record };
}

/** A hash of nothing anyone holds: unknown clients are compared against it, so they cost the same time as known ones. */
const noSecret = secretHash("kubecrew: no such client");

/**
 * Whether `clientSecret` is the secret whose hash is `storedHash`; `undefined` (no such client) never matches but
 * takes the same time as a known client.
 */
export function clientSecretMatches(storedHash: Buffer | undefined, clientSecret: string): boolean {
  const matches = timingSafeEqual(storedHash ?? noSecret, secretHash(clientSecret));
  return storedHash !== undefined && matches;
}
