import { z } from "zod";
import { outboundEnvSchema } from "../core/outbound/config.ts";
import { clusterPolicy } from "../core/outbound/policy.ts";
import { authConfigSchema } from "./auth/config.ts";

/** `kubecrew api` (cluster mode): the environment, parsed once at startup. */
export const apiConfigSchema = authConfigSchema.extend({
  HOST: z.string().default("0.0.0.0"),
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  /** The namespace whose Crews the API serves (the pod's own, through the downward API). */
  POD_NAMESPACE: z.string().min(1).default("default"),
  KUBECREW_DEFAULT_CREW: z.string().optional(),
  /** Proxies in front of the API (the Ingress controller) whose X-Forwarded-For is trusted; 0 trusts none. */
  KUBECREW_TRUST_PROXY: z.coerce.number().int().min(0).default(0),
  KUBECREW_BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(1024 * 1024),
  REDIS_URL: z
    .string()
    .min(1, "is required: bearer tokens live in Redis")
    .regex(/^rediss?:\/\//, "must be a redis:// or rediss:// URL"),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  ...outboundEnvSchema(clusterPolicy),
});
export type ApiConfig = z.infer<typeof apiConfigSchema>;
