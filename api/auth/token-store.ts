import { DependencyUnavailable } from "../../core/errors.ts";
import type { Principal } from "./principal.ts";

/**
 * Resolves bearer tokens to principals. The embedded default keeps tokens in memory (MemoryTokenStore); deployments
 * keep them in Redis (RedisTokenStore). `verify` answers undefined for an unknown, revoked or expired token; it throws
 * TokenStoreUnavailable when the backing store cannot be reached (the API then fails closed with 503).
 */
export interface TokenStore {
  verify(token: string): Promise<Principal | undefined>;
  /**
   * The token's principal when the store can tell without waiting (a token it verified a moment ago, a store in
   * memory); undefined when it cannot tell at once or the token is not valid, and verify() decides. A status poll is
   * answered with it from the status route's cache (api/routes/status-route.ts).
   */
  verifyAtOnce?(token: string): Principal | undefined;
}

/** The token store (Redis) cannot be reached: the error mapper answers 503 (core/errors.ts). */
export class TokenStoreUnavailable extends DependencyUnavailable {
  override name = "TokenStoreUnavailable";

  constructor(cause?: unknown) {
    super("token store", "Token store unavailable", {
      cause,
      answer: "The token store is unreachable; try again shortly",
    });
  }
}

export type Role = Principal["kind"];

/** What is kept about a token next to its hash; never the token itself. */
export interface TokenRecord {
  /** Non-secret id, for list and revoke. */
  id: string;
  /** The principal's kind: org, or user (access tokens take their client's role). */
  kind: Role;
  crews: string[] | "*";
  /** The user for user tokens; the token's id for org tokens; the client's id for access tokens. */
  subject: string;
  /** Access tokens: the client that obtained it with client credentials. */
  clientId?: string;
  /** ISO 8601 times. */
  created: string;
  expires?: string;
}

/** A service account: exchanges client_id + client_secret at the token endpoint for access tokens. */
export interface ClientRecord {
  clientId: string;
  /** The kind of principal its access tokens carry. */
  role: Role;
  crews: string[] | "*";
  name?: string;
  created: string;
}

export interface NewTokenRequest {
  kind: Role;
  crews: string[] | "*";
  /** The user a user token belongs to (required for kind user). */
  user?: string;
  /** Lifetime; without it the token lasts until revoked. */
  ttlSeconds?: number;
}

export interface NewClientRequest {
  role: Role;
  crews: string[] | "*";
  name?: string;
}

/** A freshly minted token: the only moment its clear text exists outside the caller. */
export interface IssuedToken {
  token: string;
  record: TokenRecord;
}

export interface CreatedClient {
  clientSecret: string;
  record: ClientRecord;
}

/**
 * The token store with its management operations (the `token` / `client` commands, the admin API, the token
 * endpoint). Every operation throws TokenStoreUnavailable when the backing store cannot be reached.
 */
export interface ManagedTokenStore extends TokenStore {
  createToken(request: NewTokenRequest): Promise<IssuedToken>;
  /** Org and user tokens that have not expired, oldest first. Access tokens are managed through their client. */
  listTokens(): Promise<TokenRecord[]>;
  /** False when no such token exists (or it already expired). */
  revokeToken(id: string): Promise<boolean>;

  createClient(request: NewClientRequest): Promise<CreatedClient>;
  listClients(): Promise<ClientRecord[]>;
  /** Deletes the client and every access token it obtained. False when no such client exists. */
  revokeClient(clientId: string): Promise<boolean>;
  /** The client if the secret is right; the comparison is constant-time. */
  authenticateClient(clientId: string, clientSecret: string): Promise<ClientRecord | undefined>;
  /**
   * An access token carrying the crews and role of the client just authenticated; undefined if the client was
   * revoked meanwhile (checked atomically with the issue).
   */
  issueAccessToken(client: ClientRecord, ttlSeconds: number): Promise<IssuedToken | undefined>;
}

export function principalOfRecord(record: TokenRecord) {
  return { kind: record.kind, crews: record.crews, subject: record.subject } satisfies Principal;
}

/** Who a new org or user token speaks for: the user, or for an org token the token itself (its id). */
export function tokenSubject(request: NewTokenRequest, id: string): string {
  if (request.kind === "org") return id;
  if (!request.user) throw new Error("A user token needs the user it belongs to");
  return request.user;
}
