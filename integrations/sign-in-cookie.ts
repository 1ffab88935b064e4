import { z } from "zod";
import { readCookie, signCookieValue, verifyCookieValue } from "./signed-cookie.ts";

/** The browser's half of a sign-in: bound to the one-time state, carrying the PKCE verifier (and OIDC nonce). */
export interface SignInCookie {
  state: string;
  codeVerifier: string;
  nonce?: string;
  expiresAt: number;
}

const cookieSchema = z.object({
  state: z.string().min(1),
  codeVerifier: z.string().min(43),
  nonce: z.string().optional(),
  expiresAt: z.number(),
});

export const signInCookieName = "kubecrew_oauth_signin";

export interface CookieOptions {
  secret: string;
  /** The public path of the callback routes, e.g. `/oauthsvc/v1/auth`. */
  path: string;
  secure: boolean;
}

function attributes(options: CookieOptions, maxAgeSeconds: number): string {
  return [
    `Path=${options.path}`,
    `Max-Age=${maxAgeSeconds}`,
    "HttpOnly",
    "SameSite=Lax",
    ...(options.secure ? ["Secure"] : []),
  ].join("; ");
}

export function setSignInCookie(cookie: SignInCookie, options: CookieOptions, now: number): string {
  const maxAge = Math.max(1, Math.floor((cookie.expiresAt - now) / 1000));
  return `${signInCookieName}=${signCookieValue(cookie, options.secret)}; ${attributes(options, maxAge)}`;
}

export function clearSignInCookie(options: CookieOptions): string {
  return `${signInCookieName}=; ${attributes(options, 0)}`;
}

/** The verified, unexpired sign-in cookie from a Cookie header, or undefined. */
export function readSignInCookie(header: string | undefined, secret: string, now: number): SignInCookie | undefined {
  const raw = readCookie(header, signInCookieName);
  if (!raw) return undefined;
  const parsed = cookieSchema.safeParse(verifyCookieValue(raw, secret));
  if (!parsed.success || parsed.data.expiresAt <= now) return undefined;
  const { nonce, ...rest } = parsed.data;
  return nonce === undefined ? rest : { ...rest, nonce };
}
