import { timingSafeEqual } from "node:crypto";
import type { Principal } from "./principal.ts";
import { newTokenId, secretHash, secretHashHex } from "./token-format.ts";
import { clientSecretMatches, newAccessTokenRecord, newClientRecord, newTokenRecord } from "./token-records.ts";
import {
  principalOfRecord,
  type ClientRecord,
  type CreatedClient,
  type IssuedToken,
  type ManagedTokenStore,
  type NewClientRequest,
  type NewTokenRequest,
  type TokenRecord,
} from "./token-store.ts";

interface StoredToken {
  hash: Buffer;
  record: TokenRecord;
  expiresAt: number;
}

/**
 * Tokens and clients held in memory, only as SHA-256 hashes: the embedded default (`kubecrew dev` without Redis)
 * and tests. Same behaviour as RedisTokenStore (one contract suite runs against both).
 */
export class MemoryTokenStore implements ManagedTokenStore {
  private readonly tokens = new Map<string, StoredToken>();
  private readonly ids = new Map<string, string>();
  private readonly clients = new Map<string, { hash: Buffer; record: ClientRecord }>();
  private readonly now: () => number;

  constructor(options: { now?: () => number } = {}) {
    this.now = options.now ?? Date.now;
  }

  /** Adds a token chosen by the caller (the dev server's printed tokens, test fixtures); it never expires. */
  add(token: string, principal: Principal): void {
    const id = newTokenId();
    this.store(token, { id, ...principal, created: new Date(this.now()).toISOString() }, Infinity);
  }

  async verify(token: string): Promise<Principal | undefined> {
    return this.verifyAtOnce(token);
  }

  /** Everything is in memory: always tells at once. */
  verifyAtOnce(token: string): Principal | undefined {
    const hashHex = secretHashHex(token);
    const entry = this.tokens.get(hashHex);
    // The lookup is by hash, so timing reveals nothing about the token; compare anyway as defence in depth.
    if (!entry || !timingSafeEqual(entry.hash, Buffer.from(hashHex, "hex"))) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.forget(entry.record.id);
      return undefined;
    }
    return principalOfRecord(entry.record);
  }

  async createToken(request: NewTokenRequest): Promise<IssuedToken> {
    const { token, record, expiresAt } = newTokenRecord(request, this.now());
    this.store(token, record, expiresAt ?? Infinity);
    return { token, record };
  }

  async listTokens(): Promise<TokenRecord[]> {
    this.dropExpired();
    return [...this.tokens.values()].filter((t) => !t.record.clientId).map((t) => t.record);
  }

  async revokeToken(id: string): Promise<boolean> {
    this.dropExpired();
    return this.forget(id);
  }

  async createClient(request: NewClientRequest): Promise<CreatedClient> {
    const { clientSecret, record } = newClientRecord(request, this.now());
    this.clients.set(record.clientId, { hash: secretHash(clientSecret), record });
    return { clientSecret, record };
  }

  async listClients(): Promise<ClientRecord[]> {
    return [...this.clients.values()].map((c) => c.record);
  }

  async revokeClient(clientId: string): Promise<boolean> {
    if (!this.clients.delete(clientId)) return false;
    for (const entry of [...this.tokens.values()]) {
      if (entry.record.clientId === clientId) this.forget(entry.record.id);
    }
    return true;
  }

  async authenticateClient(clientId: string, clientSecret: string): Promise<ClientRecord | undefined> {
    const client = this.clients.get(clientId);
    return clientSecretMatches(client?.hash, clientSecret) ? client?.record : undefined;
  }

  async issueAccessToken(client: ClientRecord, ttlSeconds: number): Promise<IssuedToken | undefined> {
    if (!this.clients.has(client.clientId)) return undefined;
    const { token, record, expiresAt } = newAccessTokenRecord(client, ttlSeconds, this.now());
    this.store(token, record, expiresAt);
    return { token, record };
  }

  private store(token: string, record: TokenRecord, expiresAt: number): void {
    const hash = secretHash(token);
    this.tokens.set(hash.toString("hex"), { hash, record, expiresAt });
    this.ids.set(record.id, hash.toString("hex"));
  }

  private forget(id: string): boolean {
    const key = this.ids.get(id);
    if (key === undefined) return false;
    this.ids.delete(id);
    this.tokens.delete(key);
    return true;
  }

  private dropExpired(): void {
    const now = this.now();
    for (const entry of [...this.tokens.values()]) if (entry.expiresAt <= now) this.forget(entry.record.id);
  }
}
