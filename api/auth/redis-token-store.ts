import { timingSafeEqual } from "node:crypto";
import type { Redis } from "ioredis";
import type { Principal } from "./principal.ts";
import { secretHash, secretHashHex } from "./token-format.ts";
import type { VerifiedTokens } from "./verified-tokens.ts";
import { clientSecretMatches, newAccessTokenRecord, newClientRecord, newTokenRecord } from "./token-records.ts";
import {
  principalOfRecord,
  TokenStoreUnavailable,
  type ClientRecord,
  type CreatedClient,
  type IssuedToken,
  type ManagedTokenStore,
  type NewClientRequest,
  type NewTokenRequest,
  type TokenRecord,
} from "./token-store.ts";

/**
 * Redis keys (every one under the prefix). Tokens and secrets appear only as SHA-256 hashes:
 *   token:<sha256 of the token>   JSON TokenRecord + its hash; expires with the token (PXAT)
 *   token-id:<id>                 the token's hash, to revoke by id; expires with the token
 *   tokens                        ZSET of org/user token ids scored by expiry (ms, +inf for none), for `token list`
 *   client:<client_id>            JSON ClientRecord + the secret's hash
 *   clients                       ZSET of client ids scored by creation time
 *   client-tokens:<client_id>     ZSET of the client's access-token ids scored by expiry, to revoke them with it
 */
export function tokenKeys(prefix: string) {
  return {
    token: (hashHex: string) => `${prefix}token:${hashHex}`,
    tokenId: (id: string) => `${prefix}token-id:${id}`,
    tokens: `${prefix}tokens`,
    client: (clientId: string) => `${prefix}client:${clientId}`,
    clients: `${prefix}clients`,
    clientTokens: (clientId: string) => `${prefix}client-tokens:${clientId}`,
  };
}

type StoredToken = TokenRecord & { hash: string };
type StoredClient = ClientRecord & { secretHash: string };

// Lua scripts run atomically: a client revoked while one of its token requests is in flight cannot end up with a
// live access token, and revoking never leaves a token without its id key or the other way round. A revocation is
// published on <prefix>revocations in the same step, before the revoker's answer, for the replicas' VerifiedTokens. The scripts
// build the keys of a client's tokens from the prefix, so they suit a single Redis (or a primary with replicas),
// not Redis Cluster.
const scripts = {
  kubecrewIssueAccessToken: {
    // KEYS: client, token, token-id, client-tokens. ARGV: stored record, hash, id, expires ms, now ms.
    numberOfKeys: 4,
    lua: `
if redis.call('exists', KEYS[1]) == 0 then return 0 end
redis.call('set', KEYS[2], ARGV[1], 'PXAT', ARGV[4])
redis.call('set', KEYS[3], ARGV[2], 'PXAT', ARGV[4])
redis.call('zremrangebyscore', KEYS[4], '-inf', ARGV[5])
redis.call('zadd', KEYS[4], ARGV[4], ARGV[3])
local at = redis.call('pexpiretime', KEYS[4])
if at < tonumber(ARGV[4]) then redis.call('pexpireat', KEYS[4], ARGV[4]) end
return 1`,
  },
  kubecrewRevokeToken: {
    // KEYS: token-id, tokens. ARGV: prefix, id.
    numberOfKeys: 2,
    lua: `
redis.call('zrem', KEYS[2], ARGV[2])
local hash = redis.call('get', KEYS[1])
if not hash then return 0 end
local tokenKey = ARGV[1] .. 'token:' .. hash
local stored = redis.call('get', tokenKey)
redis.call('del', tokenKey, KEYS[1])
if stored then
  local record = cjson.decode(stored)
  if type(record.clientId) == 'string' then redis.call('zrem', ARGV[1] .. 'client-tokens:' .. record.clientId, ARGV[2]) end
end
redis.call('publish', ARGV[1] .. 'revocations', ARGV[2])
return 1`,
  },
  kubecrewRevokeClient: {
    // KEYS: client, clients, client-tokens. ARGV: prefix, client id.
    numberOfKeys: 3,
    lua: `
redis.call('zrem', KEYS[2], ARGV[2])
if redis.call('del', KEYS[1]) == 0 then return 0 end
for _, id in ipairs(redis.call('zrange', KEYS[3], 0, -1)) do
  local idKey = ARGV[1] .. 'token-id:' .. id
  local hash = redis.call('get', idKey)
  if hash then redis.call('del', ARGV[1] .. 'token:' .. hash) end
  redis.call('del', idKey)
end
redis.call('del', KEYS[3])
redis.call('publish', ARGV[1] .. 'revocations', ARGV[2])
return 1`,
  },
} as const;

type ScriptCommands = { [name in keyof typeof scripts]: (...args: (string | number)[]) => Promise<number> };

export interface RedisTokenStoreOptions {
  /** Key prefix, e.g. "kubecrew:". */
  prefix?: string;
  now?: () => number;
  /** Tokens verified a moment ago, answered without Redis (the API's; management commands go without). */
  verified?: VerifiedTokens;
}

/**
 * Tokens and clients in Redis, as SHA-256 hashes with their metadata; expiry through Redis key expiry and checked
 * again on every verify. Any Redis failure surfaces as TokenStoreUnavailable, which the API answers with 503: give
 * the client `enableOfflineQueue: false` and a command timeout (see connectRedis) so that happens at once.
 */
export class RedisTokenStore implements ManagedTokenStore {
  private readonly redis: Redis;
  private readonly keys: ReturnType<typeof tokenKeys>;
  private readonly prefix: string;
  private readonly now: () => number;
  private readonly verified: VerifiedTokens | undefined;

  constructor(redis: Redis, options: RedisTokenStoreOptions = {}) {
    this.redis = redis;
    this.verified = options.verified;
    this.prefix = options.prefix ?? "kubecrew:";
    this.keys = tokenKeys(this.prefix);
    this.now = options.now ?? Date.now;
    for (const [name, script] of Object.entries(scripts)) redis.defineCommand(name, script);
  }

  /** From the verified-token memory only (none: always undefined). */
  verifyAtOnce(token: string): Principal | undefined {
    return this.verified?.get(secretHashHex(token));
  }

  async verify(token: string): Promise<Principal | undefined> {
    const hashHex = secretHashHex(token);
    const known = this.verified?.get(hashHex);
    if (known) return known;
    const generation = this.verified?.begin() ?? 0;
    const stored = await this.call(() => this.redis.get(this.keys.token(hashHex)));
    if (!stored) return undefined;
    const record = JSON.parse(stored) as StoredToken;
    // The lookup is by hash, so timing reveals nothing about the token; compare anyway as defence in depth.
    if (!timingSafeEqual(Buffer.from(record.hash, "hex"), Buffer.from(hashHex, "hex"))) return undefined;
    // Redis expires the key; the check covers the moments between expiry and Redis's eviction, and clock skew.
    const expiresAt = record.expires ? Date.parse(record.expires) : undefined;
    if (expiresAt !== undefined && expiresAt <= this.now()) return undefined;
    const principal = principalOfRecord(record);
    this.verified?.remember(hashHex, principal, expiresAt, generation);
    return principal;
  }

  async createToken(request: NewTokenRequest): Promise<IssuedToken> {
    const { token, record, expiresAt } = newTokenRecord(request, this.now());
    const { id } = record;
    const hash = secretHash(token).toString("hex");
    const stored = JSON.stringify({ ...record, hash } satisfies StoredToken);
    await this.call(() => {
      const multi = this.redis.multi();
      if (expiresAt) {
        multi.set(this.keys.token(hash), stored, "PXAT", expiresAt);
        multi.set(this.keys.tokenId(id), hash, "PXAT", expiresAt);
      } else {
        multi.set(this.keys.token(hash), stored);
        multi.set(this.keys.tokenId(id), hash);
      }
      multi.zadd(this.keys.tokens, expiresAt ?? "+inf", id);
      return this.exec(multi);
    });
    return { token, record };
  }

  async listTokens(): Promise<TokenRecord[]> {
    const ids = await this.call(async () => {
      await this.redis.zremrangebyscore(this.keys.tokens, "-inf", String(this.now()));
      return this.redis.zrange(this.keys.tokens, "0", "-1");
    });
    if (ids.length === 0) return [];
    const hashes = await this.call(() => this.redis.mget(...ids.map((id) => this.keys.tokenId(id))));
    const present = hashes.filter((h): h is string => h !== null);
    if (present.length === 0) return [];
    const values = await this.call(() => this.redis.mget(...present.map((h) => this.keys.token(h))));
    return values
      .filter((v): v is string => v !== null)
      .map((v) => withoutHash(JSON.parse(v) as StoredToken))
      .sort((a, b) => a.created.localeCompare(b.created));
  }

  async revokeToken(id: string): Promise<boolean> {
    const done = await this.call(() =>
      this.scripts.kubecrewRevokeToken(this.keys.tokenId(id), this.keys.tokens, this.prefix, id),
    );
    // Other replicas hear it on the revocation channel; this one forgets at once, before answering.
    this.verified?.forget();
    return done === 1;
  }

  async createClient(request: NewClientRequest): Promise<CreatedClient> {
    const now = this.now();
    const { clientSecret, record } = newClientRecord(request, now);
    const stored: StoredClient = { ...record, secretHash: secretHash(clientSecret).toString("hex") };
    await this.call(() =>
      this.exec(
        this.redis
          .multi()
          .set(this.keys.client(record.clientId), JSON.stringify(stored))
          .zadd(this.keys.clients, String(now), record.clientId),
      ),
    );
    return { clientSecret, record };
  }

  async listClients(): Promise<ClientRecord[]> {
    const ids = await this.call(() => this.redis.zrange(this.keys.clients, "0", "-1"));
    if (ids.length === 0) return [];
    const values = await this.call(() => this.redis.mget(...ids.map((id) => this.keys.client(id))));
    return values.filter((v): v is string => v !== null).map((v) => clientWithoutHash(JSON.parse(v) as StoredClient));
  }

  async revokeClient(clientId: string): Promise<boolean> {
    const done = await this.call(() =>
      this.scripts.kubecrewRevokeClient(
        this.keys.client(clientId),
        this.keys.clients,
        this.keys.clientTokens(clientId),
        this.prefix,
        clientId,
      ),
    );
    this.verified?.forget();
    return done === 1;
  }

  async authenticateClient(clientId: string, clientSecret: string): Promise<ClientRecord | undefined> {
    const value = await this.call(() => this.redis.get(this.keys.client(clientId)));
    const stored = value ? (JSON.parse(value) as StoredClient) : undefined;
    // Compared even for an unknown client, so both cost the same time.
    const matches = clientSecretMatches(stored && Buffer.from(stored.secretHash, "hex"), clientSecret);
    return stored && matches ? clientWithoutHash(stored) : undefined;
  }

  async issueAccessToken(client: ClientRecord, ttlSeconds: number): Promise<IssuedToken | undefined> {
    const { clientId } = client;
    const now = this.now();
    const { token, record, expiresAt } = newAccessTokenRecord(client, ttlSeconds, now);
    const hash = secretHash(token).toString("hex");
    const issued = await this.call(() =>
      this.scripts.kubecrewIssueAccessToken(
        this.keys.client(clientId),
        this.keys.token(hash),
        this.keys.tokenId(record.id),
        this.keys.clientTokens(clientId),
        JSON.stringify({ ...record, hash } satisfies StoredToken),
        hash,
        record.id,
        expiresAt,
        now,
      ),
    );
    return issued === 1 ? { token, record } : undefined;
  }

  private get scripts(): ScriptCommands {
    return this.redis as unknown as ScriptCommands;
  }

  /** Runs Redis commands; any failure to reach Redis becomes TokenStoreUnavailable. */
  private async call<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (err) {
      throw new TokenStoreUnavailable(err);
    }
  }

  private async exec(multi: ReturnType<Redis["multi"]>): Promise<void> {
    const results = await multi.exec();
    if (!results) throw new Error("Redis transaction aborted");
    const failed = results.find(([err]) => err);
    if (failed) throw failed[0];
  }
}

function withoutHash(stored: StoredToken): TokenRecord {
  const { hash: _hash, ...record } = stored;
  return record;
}

function clientWithoutHash(stored: StoredClient): ClientRecord {
  const { secretHash: _secretHash, ...record } = stored;
  return record;
}
