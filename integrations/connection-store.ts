import { randomUUID } from "node:crypto";
import { z } from "zod";
import type { RedisKeys } from "./redis-keys.ts";
import type { IntegrationsStore } from "./store.ts";
import type { TokenCipher } from "./token-cipher.ts";

/** Who the user is at the provider, from the verified ID token (when the provider issues one). */
export interface ProviderAccount {
  subject?: string;
  email?: string;
  hostedDomain?: string;
  tenantId?: string;
  /** Salesforce: the org's instance URL (the token response's `instance_url`), where its REST API lives. */
  instanceUrl?: string;
}

export type ConnectionStatus = "active" | "reauthorization_required";

/** A user's connected product, as shown to callers: never carries a token. */
export interface Connection {
  id: string;
  userId: string;
  provider: string;
  product: string;
  scopes: string[];
  account: ProviderAccount;
  status: ConnectionStatus;
  /** ISO time the current access token expires, when the provider said. */
  accessTokenExpiresAt: string | null;
  hasRefreshToken: boolean;
  createdAt: string;
  updatedAt: string;
}

export interface ProviderTokens {
  accessToken: string;
  refreshToken?: string;
  tokenType: string;
  expiresAt: Date | null;
  scopes: string[];
}

const storedSchema = z.object({
  id: z.string(),
  userId: z.string(),
  provider: z.string(),
  product: z.string(),
  scopes: z.array(z.string()),
  account: z.object({
    subject: z.string().optional(),
    email: z.string().optional(),
    hostedDomain: z.string().optional(),
    tenantId: z.string().optional(),
    instanceUrl: z.string().optional(),
  }),
  status: z.enum(["active", "reauthorization_required"]),
  accessTokenExpiresAt: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
  tokenType: z.string(),
  sealedAccessToken: z.string(),
  sealedRefreshToken: z.string().optional(),
});
type StoredConnection = z.infer<typeof storedSchema>;

/** A connection as callers see it (the stored record without its tokens): the OpenAPI document's `Connection`. */
export const connectionSchema = storedSchema
  .omit({ sealedAccessToken: true, sealedRefreshToken: true, tokenType: true })
  .extend({ hasRefreshToken: z.boolean() })
  .meta({ id: "Connection" });

function toConnection(stored: StoredConnection): Connection {
  const { sealedAccessToken: _a, sealedRefreshToken, tokenType: _t, ...rest } = stored;
  return { ...rest, hasRefreshToken: sealedRefreshToken !== undefined };
}

/**
 * Connections in the store (Redis, or memory under `kubecrew dev`): one JSON record per connection (tokens sealed with
 * AES-256-GCM, bound to the record id, before the store sees them) and a per-user index `<provider>/<product> →
 * connection id`, so reconnecting a product replaces the earlier connection.
 */
export function createConnectionStore(store: IntegrationsStore, keys: RedisKeys, cipher: TokenCipher, now: () => Date) {
  const accessContext = (id: string) => `connection:${id}:access_token`;
  const refreshContext = (id: string) => `connection:${id}:refresh_token`;

  async function readStored(id: string): Promise<StoredConnection | undefined> {
    const raw = await store.get(keys.connection(id));
    if (raw === undefined) return undefined;
    return storedSchema.parse(JSON.parse(raw));
  }

  function seal(
    stored: Omit<
      StoredConnection,
      "sealedAccessToken" | "sealedRefreshToken" | "tokenType" | "accessTokenExpiresAt" | "scopes"
    >,
    tokens: ProviderTokens,
  ): StoredConnection {
    return {
      ...stored,
      scopes: tokens.scopes,
      tokenType: tokens.tokenType,
      accessTokenExpiresAt: tokens.expiresAt ? tokens.expiresAt.toISOString() : null,
      sealedAccessToken: cipher.encrypt(tokens.accessToken, accessContext(stored.id)),
      ...(tokens.refreshToken !== undefined
        ? { sealedRefreshToken: cipher.encrypt(tokens.refreshToken, refreshContext(stored.id)) }
        : {}),
    };
  }

  return {
    /** Stores a fresh sign-in; an earlier connection of the same user and product is replaced in place. */
    async saveSignIn(input: {
      userId: string;
      provider: string;
      product: string;
      account: ProviderAccount;
      tokens: ProviderTokens;
    }): Promise<Connection> {
      const field = `${input.provider}/${input.product}`;
      const existingId = await store.indexGet(keys.userConnections(input.userId), field);
      const existing = existingId ? await readStored(existingId) : undefined;
      const at = now().toISOString();
      const id = existing?.id ?? randomUUID();
      const stored = seal(
        {
          id,
          userId: input.userId,
          provider: input.provider,
          product: input.product,
          account: input.account,
          status: "active",
          createdAt: existing?.createdAt ?? at,
          updatedAt: at,
        },
        input.tokens,
      );
      await store.putIndexed(
        { key: keys.connection(id), value: JSON.stringify(stored) },
        { key: keys.userConnections(input.userId), field, value: id },
      );
      return toConnection(stored);
    },

    async get(id: string): Promise<Connection | undefined> {
      const stored = await readStored(id);
      return stored && toConnection(stored);
    },

    /** The decrypted tokens; throws TamperedCiphertextError rather than return anything it cannot authenticate. */
    async readTokens(id: string): Promise<{ connection: Connection; tokens: ProviderTokens } | undefined> {
      const stored = await readStored(id);
      if (!stored) return undefined;
      const tokens: ProviderTokens = {
        accessToken: cipher.decrypt(stored.sealedAccessToken, accessContext(id)),
        tokenType: stored.tokenType,
        expiresAt: stored.accessTokenExpiresAt ? new Date(stored.accessTokenExpiresAt) : null,
        scopes: stored.scopes,
        ...(stored.sealedRefreshToken
          ? { refreshToken: cipher.decrypt(stored.sealedRefreshToken, refreshContext(id)) }
          : {}),
      };
      return { connection: toConnection(stored), tokens };
    },

    /** Replaces the tokens after a refresh; a response without a refresh token keeps the stored one. */
    async saveRefreshed(id: string, tokens: ProviderTokens): Promise<Connection | undefined> {
      const stored = await readStored(id);
      if (!stored) return undefined;
      const {
        sealedAccessToken: _a,
        sealedRefreshToken,
        tokenType: _t,
        accessTokenExpiresAt: _e,
        scopes: _s,
        ...rest
      } = stored;
      const next = seal({ ...rest, status: "active", updatedAt: now().toISOString() }, tokens);
      if (tokens.refreshToken === undefined && sealedRefreshToken !== undefined)
        next.sealedRefreshToken = sealedRefreshToken;
      await store.replace(keys.connection(id), JSON.stringify(next));
      return toConnection(next);
    },

    async markReauthorizationRequired(id: string): Promise<void> {
      const stored = await readStored(id);
      if (!stored) return;
      await store.replace(
        keys.connection(id),
        JSON.stringify({ ...stored, status: "reauthorization_required", updatedAt: now().toISOString() }),
      );
    },

    async listForUser(userId: string): Promise<Connection[]> {
      const ids = Object.values(await store.indexAll(keys.userConnections(userId)));
      if (ids.length === 0) return [];
      const raws = await store.getMany(ids.map((id) => keys.connection(id)));
      return raws
        .filter((raw): raw is string => raw !== undefined)
        .map((raw) => toConnection(storedSchema.parse(JSON.parse(raw))))
        .sort((a, b) => a.createdAt.localeCompare(b.createdAt));
    },

    async delete(connection: Connection): Promise<void> {
      await store.deleteIndexed(keys.connection(connection.id), {
        key: keys.userConnections(connection.userId),
        field: `${connection.provider}/${connection.product}`,
      });
    },
  };
}
export type ConnectionStore = ReturnType<typeof createConnectionStore>;
