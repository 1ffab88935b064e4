import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { AppCredentialClaims } from "../../core/app-credential.ts";
import { appCatalogue, appToolName, type AppAction } from "../../core/apps.ts";
import type { Logger } from "../../core/logger.ts";
import type { Agent } from "undici";
import type { Fetch } from "../../platform/outbound/outbound-fetch.ts";
import { OutboundRefusedError } from "../../core/outbound/policy.ts";
import type { AccessTokens } from "../access-tokens.ts";
import type { IntegrationsConfig } from "../config.ts";
import type { ConnectionStore } from "../connection-store.ts";
import { IntegrationError } from "../errors.ts";
import { findProviderDefinition } from "../providers.ts";
import type { SignIn } from "../sign-in.ts";
import { ProviderApiError, type AppActionDefinition } from "./app-action.ts";

export interface AppToolCallDeps {
  config: IntegrationsConfig;
  connections: ConnectionStore;
  accessTokens: AccessTokens;
  signIn: SignIn;
  fetch: Fetch;
  dispatcher: Agent;
  logger: Logger;
}

/**
 * Whether the outbound policy refused the call: the SDKs wrap what their fetch, dispatcher or agent threw (as a cause,
 * or, for Graph, as the error's `code` name), so look through them.
 */
function refusedByPolicy(error: unknown): boolean {
  for (
    let e = error, depth = 0;
    e && typeof e === "object" && depth < 5;
    e = (e as { cause?: unknown }).cause, depth++
  ) {
    const { name, code } = e as { name?: unknown; code?: unknown };
    if (e instanceof OutboundRefusedError || name === "OutboundRefusedError" || code === "OutboundRefusedError")
      return true;
    if (code === "EOUTBOUND_REFUSED") return true;
  }
  return false;
}

const toolError = (text: string): CallToolResult => ({ isError: true, content: [{ type: "text", text }] });

/**
 * One tool call as the credential's user: that user's connection for the app's provider/product (the user comes only
 * from the credential, so no call can reach another user's connection), a fresh access token (refreshed ahead of
 * expiry under the shared lock), the provider's API. Every failure is an answer the model can act on.
 */
export function createAppToolCalls(deps: AppToolCallDeps) {
  const { config, connections, accessTokens, signIn, logger } = deps;

  /** A connect link for this user and product, returning where the operator said (or this service's own page). */
  async function connectUrl(user: string, app: AppAction["app"]): Promise<string> {
    const { provider, product } = appCatalogue[app];
    const returnUrl = config.apps.connectReturnUrl ?? `${config.publicUrl.href.replace(/\/+$/, "")}/v1/connected`;
    const session = await signIn.createConnectSession({ userId: user, provider, product, returnUrl });
    return session.url;
  }

  function providerName(app: AppAction["app"]): string {
    return findProviderDefinition(appCatalogue[app].provider)?.displayName ?? appCatalogue[app].provider;
  }

  function scopeName(app: AppAction["app"]): string {
    const { provider, product } = appCatalogue[app];
    const scopes = findProviderDefinition(provider)?.products[product]?.scopes ?? [];
    return scopes.length > 0 ? scopes.join(" ") : `${app}`;
  }

  async function call(
    claims: AppCredentialClaims,
    action: AppAction,
    definition: AppActionDefinition,
    input: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<CallToolResult> {
    const tool = appToolName(action);
    const log = logger.child({ executionUid: claims.executionUid, execution: claims.execution, tool });
    const user = claims.user;
    if (user === null) {
      return toolError(
        `no user for this execution: ${action.app} acts as the user who started it (kick off with a user token, name a "user" in the kickoff, or set the crew's spec.apps.runAs)`,
      );
    }
    const { provider, product } = appCatalogue[action.app];
    const connection = (await connections.listForUser(user)).find(
      (c) => c.provider === provider && c.product === product,
    );
    const reconnect = async (what: string) => {
      try {
        return `${what}: reconnect at ${await connectUrl(user, action.app)}`;
      } catch (error) {
        if (error instanceof IntegrationError) return `${what}; it cannot be reconnected here: ${error.message}`;
        throw error;
      }
    };
    if (!connection) {
      log.info({ user, outcome: "not_connected" }, "App tool call");
      try {
        return toolError(
          `${action.app} is not connected for user ${user}; connect at ${await connectUrl(user, action.app)}`,
        );
      } catch (error) {
        if (error instanceof IntegrationError)
          return toolError(`${action.app} is not connected for user ${user} and cannot be connected: ${error.message}`);
        throw error;
      }
    }
    let accessToken: string;
    try {
      accessToken = (await accessTokens.fresh(connection.id)).accessToken;
    } catch (error) {
      if (!(error instanceof IntegrationError)) throw error;
      log.info({ user, outcome: "token_unavailable", status: error.status }, "App tool call");
      if (error.status === 409)
        return toolError(await reconnect(`the ${action.app} connection of user ${user} has expired`));
      return toolError(`${action.app} is unavailable: ${error.message}`);
    }
    try {
      const result = await definition.run(
        {
          accessToken,
          fetch: deps.fetch,
          dispatcher: deps.dispatcher,
          outboundPolicy: config.outbound,
          apiRoots: config.apps.apiRoots,
          account: connection.account,
          ...(signal ? { signal } : {}),
        },
        input,
      );
      log.info({ user, outcome: "ok" }, "App tool call");
      return { content: [{ type: "text", text: JSON.stringify(result) }] };
    } catch (error) {
      const name = providerName(action.app);
      if (error instanceof ProviderApiError) {
        log.info({ user, outcome: "provider_error", status: error.status }, "App tool call");
        // The provider's message, never anything of the request: it could only hold the token by echoing it.
        const said = error.message.split(accessToken).join("[redacted]");
        if (error.status === 401)
          return toolError(await reconnect(`${name} refused the ${action.app} access of user ${user} (401: ${said})`));
        if (error.status === 403)
          return toolError(await reconnect(`${name} answered 403 (${said}); grant the ${scopeName(action.app)} scope`));
        return toolError(`${name} answered ${error.status} to ${tool}: ${said}`);
      }
      if (refusedByPolicy(error)) {
        return toolError(`${name} could not be called: the outbound URL policy refuses its address`);
      }
      // Anything else (a network failure, an answer the SDK could not read): said plainly, without the SDK's details,
      // whose request objects carry the token.
      log.warn(
        { user, outcome: "failed", err: error instanceof Error ? `${error.name}: ${error.message}` : "unknown" },
        "App tool call",
      );
      return toolError(`${name} could not be reached or answered unreadably for ${tool}; try again later`);
    }
  }

  return { call };
}
export type AppToolCalls = ReturnType<typeof createAppToolCalls>;
