import ipaddr from "ipaddr.js";
import { z } from "zod";
import { configSchema, variable } from "../config.ts";
import { runnerPolicy, type OutboundPolicy } from "./policy.ts";

const addressOrRange = (entry: string) => (entry.includes("/") ? ipaddr.isValidCIDR(entry) : ipaddr.isValid(entry));

/**
 * The outbound policy's fields, each beside its variable, the same in every component; each component passes its own
 * defaults (a cluster refuses loopback, `kubecrew dev` allows it). Their config object is the OutboundPolicy.
 */
export function outboundFields(defaults: OutboundPolicy) {
  return {
    allowLoopback: variable(
      "KUBECREW_OUTBOUND_ALLOW_LOOPBACK",
      z
        .stringbool()
        .default(defaults.allowLoopback)
        .describe("Outbound calls (webhooks, LLM providers, MCP servers, provider APIs) may reach loopback addresses."),
    ),
    allowPrivate: variable(
      "KUBECREW_OUTBOUND_ALLOW_PRIVATE",
      z
        .stringbool()
        .default(defaults.allowPrivate)
        .describe("Outbound calls may reach private, link-local and other non-public addresses."),
    ),
    allow: variable(
      "KUBECREW_OUTBOUND_ALLOW",
      z
        .string()
        .default(defaults.allow.join(","))
        .transform((raw): readonly string[] =>
          raw
            .split(",")
            .map((s) => s.trim())
            .filter(Boolean),
        )
        .refine(
          (entries) => entries.every(addressOrRange),
          "must be a comma-separated list of IP addresses or CIDR ranges",
        )
        .describe(
          "Comma-separated IP addresses or CIDR ranges outbound calls may reach although the policy refuses them.",
        ),
    ),
  };
}

/**
 * The policy the task runner applies given the environment it runs with (runner/config.ts reads the same variables
 * with the same defaults); invalid variables, which stop the runner itself, leave the defaults.
 */
export function runnerPolicyFromEnv(env: Record<string, string | undefined>): OutboundPolicy {
  const parsed = configSchema(outboundFields(runnerPolicy)).safeParse(env);
  return parsed.success ? (parsed.data satisfies OutboundPolicy) : runnerPolicy;
}
