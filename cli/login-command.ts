import { text } from "node:stream/consumers";
import type { Command } from "commander";
import { CrewApiClient } from "./api-client.ts";
import { loadClientConfig, reportFailures } from "./api-command.ts";
import { API_URL_PROBLEM, parseApiUrl } from "./client-config.ts";
import { CommandFailure } from "./command-failure.ts";
import { saveLogin } from "./saved-login.ts";

interface LoginOptions {
  url: string;
  token?: string;
  tokenStdin?: boolean;
}

/**
 * `kubecrew login --url U --token T`: checks the token against the API (GET /crews), then saves both for the other
 * commands in the user's config directory, readable by the user only.
 */
export function registerLoginCommand(program: Command): void {
  program
    .command("login")
    .description("Save the crew API's URL and a bearer token for the other commands, once the API accepts the token")
    .requiredOption("--url <url>", "the crew API, e.g. http://127.0.0.1:8080")
    .option("--token <token>", "the bearer token (default: KUBECREW_TOKEN)")
    .option("--token-stdin", "read the token from standard input (keeps it out of the shell's history)")
    .action(async (options: LoginOptions) => {
      const config = loadClientConfig("login");
      await reportFailures("login", async () => {
        const url = parseApiUrl(options.url);
        if (url === undefined) throw new CommandFailure(`--url ${API_URL_PROBLEM}`);
        const token = options.tokenStdin ? (await text(process.stdin)).trim() : (options.token ?? config.token);
        if (!token) throw new CommandFailure("no token: pass --token or --token-stdin, or set KUBECREW_TOKEN");
        const client = new CrewApiClient({ url, token });
        const { crews } = await client.crews().finally(() => client.close());
        saveLogin(config.loginFile, { url, token });
        const names = crews.map((c) => c.name).join(", ") || "none yet";
        process.stdout.write(`Logged in to ${url} (crews: ${names}); saved to ${config.loginFile}\n`);
      });
    });
}
