import type { Agent } from "undici";
import type { z } from "zod";
import type { Fetch } from "../../platform/outbound/outbound-fetch.ts";
import type { OutboundPolicy } from "../../core/outbound/policy.ts";
import type { ProviderApiRoots } from "./apps-settings.ts";
import type { ProviderAccount } from "../connection-store.ts";
import { KubecrewError } from "../../core/errors.ts";

/** What an action is given to call its provider: the user's fresh access token and the checked fetch. */
export interface ActionContext {
  accessToken: string;
  /** The outbound client's fetch: every provider call goes through the one URL policy. */
  fetch: Fetch;
  /** The same checked connections as a dispatcher, for SDKs that take one instead of a fetch. */
  dispatcher: Agent;
  /** The policy itself, for SDKs that only take a Node agent (platform/outbound/node-agent.ts). */
  outboundPolicy: OutboundPolicy;
  apiRoots: ProviderApiRoots;
  /** The connection's account at the provider (e.g. Salesforce's instance URL). */
  account: ProviderAccount;
  signal?: AbortSignal;
}

/** One action of an app, served as one MCP tool: a description and input schema a model can use, and what it does. */
export interface AppActionDefinition<Shape extends z.ZodRawShape = z.ZodRawShape> {
  description: string;
  input: Shape;
  /** The provider's answer, reduced to what a model needs; serialised as JSON text. */
  run(context: ActionContext, input: z.infer<z.ZodObject<Shape>>): Promise<unknown>;
}

export function defineAction<Shape extends z.ZodRawShape>(
  definition: AppActionDefinition<Shape>,
): AppActionDefinition<z.ZodRawShape> {
  return definition as unknown as AppActionDefinition<z.ZodRawShape>;
}

/**
 * A provider API's refusal, as the SDKs report it differently: the HTTP status and the provider's own message. Never
 * the request (which carries the access token).
 */
export class ProviderApiError extends KubecrewError {
  readonly code = "provider_api_error";
  override name = "ProviderApiError";
  readonly status: number;

  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}
