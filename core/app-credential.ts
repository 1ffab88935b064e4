import { errors, jwtVerify, SignJWT } from "jose";
import { z } from "zod";
import { configSchema, parseConfig, variable } from "./config.ts";
import { KubecrewError } from "./errors.ts";

/**
 * The execution-scoped app credential: what a task pod (or a `kubecrew dev` task) shows the integrations service's
 * `/v1/mcp` instead of the internal API key. A JWT (HS256) signed with KUBECREW_APPS_SIGNING_KEY, which only the
 * controller (or `kubecrew dev`) and the integrations service hold; bound to one execution (`jti` = its uid), one user
 * (`sub`) and the apps its crew declares, expiring at the execution's deadline.
 */

export const APP_CREDENTIAL_ISSUER = "kubecrew-controller";
export const APP_CREDENTIAL_AUDIENCE = "kubecrew-integrations";

/** The variable every holder of the signing key reads, with the project's config convention. */
export const appsSigningKey = variable(
  "KUBECREW_APPS_SIGNING_KEY",
  z
    .string({ error: "is required (at least 32 characters; generate one with `openssl rand -hex 32`)" })
    .min(32, "must be at least 32 characters (generate one with `openssl rand -hex 32`)")
    .describe(
      "Signs the execution-scoped app credentials; the same key in the integrations service and in what starts executions (at least 32 characters).",
    ),
);

/** Reads KUBECREW_APPS_SIGNING_KEY; a missing or short key throws ConfigError naming the variable. */
export function appsSigningKeyFrom(env: Record<string, string | undefined>): string {
  return parseConfig(configSchema({ signingKey: appsSigningKey }), env).signingKey;
}

export interface AppCredentialGrant {
  /** The CrewExecution's uid: the credential's `jti`, what revocation names. */
  executionUid: string;
  /** `namespace/name` of the CrewExecution. */
  execution: string;
  /** Whose connections the tools use; null when the execution has no user (its tools answer "no user"). */
  user: string | null;
  /** The crew's declared app references, e.g. ["gmail", "google_calendar/list_events"]. */
  apps: readonly string[];
  expiresAt: Date;
}

export interface AppCredentialClaims {
  executionUid: string;
  execution: string;
  user: string | null;
  apps: string[];
  expiresAt: Date;
  issuedAt: Date;
}

export type AppCredentialProblem = "expired" | "bad_signature" | "malformed";

/** Why a credential was refused: expired, not signed with our key, or not one of our credentials at all. */
export class AppCredentialError extends KubecrewError {
  readonly code = "invalid_app_credential";
  override name = "AppCredentialError";
  readonly problem: AppCredentialProblem;

  constructor(problem: AppCredentialProblem, message: string) {
    super(message);
    this.problem = problem;
  }
}

const claimsSchema = z.object({
  jti: z.string().min(1),
  execution: z.string().min(1),
  sub: z.string().min(1).optional(),
  apps: z.array(z.string()),
  exp: z.number(),
  iat: z.number(),
});

const secretOf = (key: string) => new TextEncoder().encode(key);

export async function mintAppCredential(key: string, grant: AppCredentialGrant): Promise<string> {
  const jwt = new SignJWT({ execution: grant.execution, apps: [...grant.apps] })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setIssuer(APP_CREDENTIAL_ISSUER)
    .setAudience(APP_CREDENTIAL_AUDIENCE)
    .setJti(grant.executionUid)
    .setIssuedAt()
    .setExpirationTime(Math.floor(grant.expiresAt.getTime() / 1000));
  if (grant.user !== null) jwt.setSubject(grant.user);
  return jwt.sign(secretOf(key));
}

/** The credential's claims, or AppCredentialError. `now` is injectable for tests and for a clock the caller keeps. */
export async function verifyAppCredential(
  key: string,
  token: string,
  now: Date = new Date(),
): Promise<AppCredentialClaims> {
  let payload;
  try {
    ({ payload } = await jwtVerify(token, secretOf(key), {
      algorithms: ["HS256"],
      issuer: APP_CREDENTIAL_ISSUER,
      audience: APP_CREDENTIAL_AUDIENCE,
      currentDate: now,
      requiredClaims: ["jti", "exp", "iat"],
    }));
  } catch (error) {
    if (error instanceof errors.JWTExpired) throw new AppCredentialError("expired", "The app credential has expired");
    if (error instanceof errors.JWSSignatureVerificationFailed) {
      throw new AppCredentialError("bad_signature", "The app credential's signature does not verify");
    }
    if (error instanceof errors.JOSEError) {
      throw new AppCredentialError("malformed", `Not a valid app credential: ${error.message}`);
    }
    throw error;
  }
  const claims = claimsSchema.safeParse(payload);
  if (!claims.success) throw new AppCredentialError("malformed", "Not a valid app credential: unexpected claims");
  const { jti, execution, sub, apps, exp, iat } = claims.data;
  return {
    executionUid: jti,
    execution,
    user: sub ?? null,
    apps,
    expiresAt: new Date(exp * 1000),
    issuedAt: new Date(iat * 1000),
  };
}
