import { z } from "zod";
import type { ClientRecord, TokenRecord } from "../auth/token-store.ts";

/** A crew's name as Kubernetes allows it (DNS-1123 label), or "*" for every crew. */
const crewName = z
  .string()
  .max(63)
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, "a crew name: lowercase letters, digits and '-'");
export const crewsField = z
  .union([z.literal("*"), z.array(crewName).min(1)])
  .meta({ description: 'The crews the credential is valid for, or "*" for every crew', example: ["research"] });

const role = z.enum(["org", "user"]);

/** The longest lifetime a token may be given (10 years): the admin API, the CLI and the OpenAPI document use it. */
export const MAX_TOKEN_TTL_SECONDS = 10 * 365 * 86_400;

export const createTokenBody = z
  .strictObject({
    kind: role.meta({ description: "org: full operations on its crews; user: kickoff and its own executions" }),
    crews: crewsField,
    user: z.string().min(1).max(256).optional().meta({ description: "The user a user token belongs to" }),
    ttl_seconds: z
      .number()
      .int()
      .positive()
      .max(MAX_TOKEN_TTL_SECONDS, `at most ${MAX_TOKEN_TTL_SECONDS} seconds (10 years)`)
      .optional()
      .meta({ description: "Lifetime in seconds, at most 10 years; without it, until revoked" }),
  })
  .refine((body) => (body.kind === "user") === (body.user !== undefined), {
    message: "user is required for a user token and not allowed for an org token",
    path: ["user"],
  })
  .meta({ id: "CreateTokenRequest" });

export const tokenRecord = z
  .object({
    id: z.string().meta({ description: "Non-secret id, for list and revoke", example: "tok_3f9a0c1d2b4e5f60" }),
    kind: role,
    crews: crewsField,
    subject: z.string(),
    client_id: z.string().optional().meta({ description: "Access tokens: the client that obtained it" }),
    created: z.iso.datetime(),
    expires: z.iso.datetime().optional(),
  })
  .meta({ id: "TokenRecord" });

export const createdToken = tokenRecord
  .extend({ token: z.string().meta({ description: "The bearer token. Shown once; only its hash is kept." }) })
  .meta({ id: "CreatedToken" });

export const tokenList = z.object({ tokens: z.array(tokenRecord) }).meta({ id: "TokenList" });

export const createClientBody = z
  .strictObject({
    crews: crewsField,
    role: role.default("org").meta({ description: "The kind of principal its access tokens carry" }),
    name: z.string().min(1).max(200).optional().meta({ description: "A note saying what the client is for" }),
  })
  .meta({ id: "CreateClientRequest" });

export const clientRecord = z
  .object({
    client_id: z.string().meta({ example: "client_8d2e4f6a0b1c3d5e" }),
    role,
    crews: crewsField,
    name: z.string().optional(),
    created: z.iso.datetime(),
  })
  .meta({ id: "ClientRecord" });

export const createdClient = clientRecord
  .extend({ client_secret: z.string().meta({ description: "Shown once; only its hash is kept." }) })
  .meta({ id: "CreatedClient" });

export const clientList = z.object({ clients: z.array(clientRecord) }).meta({ id: "ClientList" });

/** The wire form of records: snake_case, as the crew API and OAuth 2.0 spell their fields. */
export function tokenRecordBody(record: TokenRecord): z.infer<typeof tokenRecord> {
  const { clientId, ...rest } = record;
  return { ...rest, ...(clientId ? { client_id: clientId } : {}) };
}

export function clientRecordBody(record: ClientRecord): z.infer<typeof clientRecord> {
  const { clientId, ...rest } = record;
  return { client_id: clientId, ...rest };
}
