import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";
import { z } from "zod";
import { configSchema, derived, variable } from "../core/config.ts";

/** The crew API's base URL as the commands use it: http(s), no credentials, query or fragment, no trailing slash. */
export function parseApiUrl(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    return undefined;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return undefined;
  if (url.username || url.password || url.search || url.hash) return undefined;
  return `${url.origin}${url.pathname.replace(/\/+$/, "")}`;
}

export const API_URL_PROBLEM = "must be an http:// or https:// URL without credentials, query or fragment";

const unsetWhenEmpty = (value: unknown) => (value === "" ? undefined : value);

/** What the commands that call the crew API (run, status, list, logs, stop, login, logout) read from the environment. */
export const clientConfigSchema = configSchema({
  url: variable(
    "KUBECREW_URL",
    z
      .preprocess(
        unsetWhenEmpty,
        z
          .string()
          .refine((text) => parseApiUrl(text) !== undefined, API_URL_PROBLEM)
          .transform((text) => parseApiUrl(text)!)
          .optional(),
      )
      .meta({ description: "The crew API the commands call.", defaultText: "the URL `kubecrew login` saved" }),
  ),
  token: variable(
    "KUBECREW_TOKEN",
    z
      .preprocess(unsetWhenEmpty, z.string().optional())
      .meta({ description: "The bearer token the commands send.", defaultText: "the token `kubecrew login` saved" }),
  ),
  loginFile: derived(
    {
      configHome: variable(
        "XDG_CONFIG_HOME",
        z
          .string()
          .optional()
          .describe("The configuration folder `kubecrew login` saves to (kubecrew/config.json), when absolute."),
      ),
      home: variable(
        "HOME",
        z.string().optional().describe("The home folder whose .config holds `kubecrew login`'s file otherwise."),
      ),
    },
    // The XDG base directory rule: a relative XDG_CONFIG_HOME is ignored.
    ({ configHome, home }) =>
      join(
        configHome && isAbsolute(configHome) ? configHome : join(home || homedir(), ".config"),
        "kubecrew",
        "config.json",
      ),
  ),
});
export type ClientConfig = z.infer<typeof clientConfigSchema>;
