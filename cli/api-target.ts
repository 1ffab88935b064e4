import { API_URL_PROBLEM, parseApiUrl, type ClientConfig } from "./client-config.ts";
import { CommandFailure } from "./command-failure.ts";
import { readSavedLogin } from "./saved-login.ts";

/** The crew API a command calls and the bearer token it sends. */
export interface ApiTarget {
  url: string;
  token: string;
}

export interface TargetOptions {
  url?: string;
  token?: string;
}

/**
 * The URL from --url, else KUBECREW_URL, else the saved login; the token from --token, else KUBECREW_TOKEN, else the
 * saved login's — only when the URL is the saved one: a token is never sent to a server it was not saved for.
 */
export function resolveTarget(options: TargetOptions, config: ClientConfig): ApiTarget {
  const flagUrl = options.url === undefined ? undefined : parseApiUrl(options.url);
  if (options.url !== undefined && flagUrl === undefined) throw new CommandFailure(`--url ${API_URL_PROBLEM}`);
  const given = { url: flagUrl ?? config.url, token: options.token || config.token };
  const saved = given.url !== undefined && given.token !== undefined ? undefined : readSavedLogin(config.loginFile);
  const url = given.url ?? saved?.url;
  if (url === undefined) {
    throw new CommandFailure(
      "no crew API given: pass --url, set KUBECREW_URL, or run kubecrew login --url URL --token TOKEN",
    );
  }
  const token = given.token ?? (saved?.url === url ? saved.token : undefined);
  if (token === undefined) {
    throw new CommandFailure(
      `no token for ${url}: pass --token, set KUBECREW_TOKEN, or run kubecrew login --url ${url} --token TOKEN`,
    );
  }
  return { url, token };
}
