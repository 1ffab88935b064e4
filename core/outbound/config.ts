import ipaddr from "ipaddr.js";
import { z } from "zod";
import type { OutboundPolicy } from "./policy.ts";

const addressOrRange = (entry: string) => (entry.includes("/") ? ipaddr.isValidCIDR(entry) : ipaddr.isValid(entry));

/**
 * The outbound policy's variables, the same in every component; each component passes its own defaults (a cluster
 * refuses loopback, `kubecrew dev` allows it).
 */
export function outboundEnvSchema(defaults: OutboundPolicy) {
  return {
    KUBECREW_OUTBOUND_ALLOW_LOOPBACK: z.stringbool().default(defaults.allowLoopback),
    KUBECREW_OUTBOUND_ALLOW_PRIVATE: z.stringbool().default(defaults.allowPrivate),
    KUBECREW_OUTBOUND_ALLOW: z
      .string()
      .default(defaults.allow.join(","))
      .transform((raw) =>
        raw
          .split(",")
          .map((s) => s.trim())
          .filter(Boolean),
      )
      .refine(
        (entries) => entries.every(addressOrRange),
        "must be a comma-separated list of IP addresses or CIDR ranges",
      ),
  };
}

export function outboundPolicyFrom(env: {
  KUBECREW_OUTBOUND_ALLOW_LOOPBACK: boolean;
  KUBECREW_OUTBOUND_ALLOW_PRIVATE: boolean;
  KUBECREW_OUTBOUND_ALLOW: string[];
}): OutboundPolicy {
  return {
    allowLoopback: env.KUBECREW_OUTBOUND_ALLOW_LOOPBACK,
    allowPrivate: env.KUBECREW_OUTBOUND_ALLOW_PRIVATE,
    allow: env.KUBECREW_OUTBOUND_ALLOW,
  };
}
