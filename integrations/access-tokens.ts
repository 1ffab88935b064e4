import * as client from "openid-client";
import type { Logger } from "../core/logger.ts";
import { DependencyUnavailable } from "../core/errors.ts";
import type { IntegrationsConfig } from "./config.ts";
import type { Connection, ConnectionStore, ProviderTokens } from "./connection-store.ts";
import { IntegrationError, notFound } from "./errors.ts";
import type { OAuthClients } from "./oauth-clients.ts";
import { isGrantRevoked, providerFailure } from "./provider-errors.ts";
import type { RedisKeys } from "./redis-keys.ts";
import { tryLock } from "./refresh-lock.ts";
import type { IntegrationsStore } from "./store.ts";
import { configuredProduct } from "./sign-in.ts";
import { tokensFromResponse } from "./token-response.ts";

export interface AccessTokenDeps {
  config: IntegrationsConfig;
  store: IntegrationsStore;
  keys: RedisKeys;
  connections: ConnectionStore;
  clients: OAuthClients;
  logger: Logger;
  now: () => Date;
}

export interface FreshAccessToken {
  accessToken: string;
  tokenType: string;
  expiresAt: Date | null;
  scopes: string[];
}

/** Longer than any token request should take; a crashed holder's lock frees itself after this. */
const lockTtlMs = 30_000;
const waitStepMs = 50;

const connectionNotFound = (id: string) => notFound("Connection not found", `No connection found with ID: ${id}`);
const reauthorizationRequired = (connection: Connection) =>
  new IntegrationError(
    409,
    "Reauthorization required",
    `The ${connection.provider} ${connection.product} connection can no longer be refreshed; the user must connect it again`,
  );

export function createAccessTokens(deps: AccessTokenDeps) {
  const { config, store, keys, connections, clients, logger, now } = deps;

  function isFresh(tokens: ProviderTokens): boolean {
    return (
      tokens.expiresAt === null || tokens.expiresAt.getTime() - now().getTime() > config.refreshAheadSeconds * 1000
    );
  }

  function answer(tokens: ProviderTokens): FreshAccessToken {
    return {
      accessToken: tokens.accessToken,
      tokenType: tokens.tokenType,
      expiresAt: tokens.expiresAt,
      scopes: tokens.scopes,
    };
  }

  async function read(id: string) {
    const found = await connections.readTokens(id);
    if (!found) throw connectionNotFound(id);
    return found;
  }

  async function refresh(connection: Connection, tokens: ProviderTokens): Promise<FreshAccessToken> {
    const { provider, product } = configuredProduct(config, connection.provider, connection.product);
    const configuration = await clients.configuration(provider, product).catch((error: unknown) => {
      throw providerFailure(error, provider.displayName, "refresh the access token");
    });
    const log = logger.child({ connectionId: connection.id, provider: provider.id, product: product.product });
    let response;
    try {
      response = await client.refreshTokenGrant(configuration, tokens.refreshToken!);
    } catch (error) {
      if (isGrantRevoked(error)) {
        log.warn("Refresh refused by the provider; the user must connect again");
        await connections.markReauthorizationRequired(connection.id);
        throw reauthorizationRequired(connection);
      }
      throw providerFailure(error, provider.displayName, "refresh the access token");
    }
    // A response without a refresh token keeps the stored one (saveRefreshed); a rotated one replaces it.
    const refreshed = tokensFromResponse(response, tokens.scopes, now(), provider.assumedAccessTokenLifetimeSeconds);
    await connections.saveRefreshed(connection.id, refreshed);
    log.info(
      { rotatedRefreshToken: refreshed.refreshToken !== undefined && refreshed.refreshToken !== tokens.refreshToken },
      "Access token refreshed",
    );
    return answer(refreshed);
  }

  return {
    /**
     * A usable access token for a connection. One that expires within the refresh-ahead window is refreshed first,
     * by exactly one caller across all replicas (a lock in the store); the others wait and read the refreshed token.
     */
    async fresh(id: string): Promise<FreshAccessToken> {
      const deadline = now().getTime() + lockTtlMs + 5_000;
      for (;;) {
        const { connection, tokens } = await read(id);
        if (connection.status !== "active") throw reauthorizationRequired(connection);
        if (isFresh(tokens)) return answer(tokens);
        if (!tokens.refreshToken) {
          if (tokens.expiresAt && tokens.expiresAt.getTime() > now().getTime()) return answer(tokens);
          throw reauthorizationRequired(connection);
        }
        const lock = await tryLock(store, keys.refreshLock(id), lockTtlMs);
        if (lock) {
          try {
            // Someone may have refreshed between our read and the lock: look again before calling the provider.
            const current = await read(id);
            if (current.connection.status !== "active") throw reauthorizationRequired(current.connection);
            if (isFresh(current.tokens) || !current.tokens.refreshToken) return answer(current.tokens);
            return await refresh(current.connection, current.tokens);
          } finally {
            await lock.release();
          }
        }
        if (now().getTime() > deadline) {
          throw new IntegrationError(
            503,
            "Refresh in progress",
            "Another request is still refreshing this connection's token; try again shortly",
          );
        }
        await new Promise((resolve) => setTimeout(resolve, waitStepMs));
      }
    },

    /** Deletes a connection, revoking its grant at the provider first where the provider supports RFC 7009. */
    async remove(id: string): Promise<{ revoked: boolean }> {
      const found = await connections.readTokens(id).catch((error: unknown) => {
        // Redis away is a 503 now, not tokens that cannot be read (which would delete without revoking).
        if (error instanceof DependencyUnavailable) throw error;
        logger.warn(
          { connectionId: id, err: error instanceof Error ? error.message : String(error) },
          "Stored tokens unreadable; deleting without revocation",
        );
        return "unreadable" as const;
      });
      if (found === undefined) throw connectionNotFound(id);
      if (found === "unreadable") {
        const connection = await connections.get(id);
        if (connection) await connections.delete(connection);
        return { revoked: false };
      }
      const { connection, tokens } = found;
      let revoked = false;
      const settings = config.providers.get(connection.provider)?.products.get(connection.product);
      if (settings) {
        const { provider, product } = configuredProduct(config, connection.provider, connection.product);
        try {
          const configuration = await clients.configuration(provider, product);
          if (configuration.serverMetadata().revocation_endpoint) {
            // Revoking the refresh token ends the whole grant at providers that follow RFC 7009 section 2.1.
            const [token, hint] = tokens.refreshToken
              ? [tokens.refreshToken, "refresh_token"]
              : [tokens.accessToken, "access_token"];
            await client.tokenRevocation(configuration, token, { token_type_hint: hint });
            revoked = true;
          }
        } catch (error) {
          logger.warn(
            { connectionId: id, err: error instanceof Error ? error.message : String(error) },
            "Revocation at the provider failed; deleting the connection anyway",
          );
        }
      }
      await connections.delete(connection);
      logger.info(
        { connectionId: id, provider: connection.provider, product: connection.product, revoked },
        "Connection deleted",
      );
      return { revoked };
    },
  };
}
export type AccessTokens = ReturnType<typeof createAccessTokens>;
