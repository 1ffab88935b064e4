import type { Command } from "commander";
import { loadClientConfig, reportFailures } from "./api-command.ts";
import { readSavedLogin, removeSavedLogin } from "./saved-login.ts";

/** `kubecrew logout`: forgets the login `kubecrew login` saved (the token itself stays valid until revoked). */
export function registerLogoutCommand(program: Command): void {
  program
    .command("logout")
    .description("Remove the saved crew API URL and token (revoke the token itself with kubecrew token revoke)")
    .action(async () => {
      const config = loadClientConfig("logout");
      await reportFailures("logout", async () => {
        const saved = (() => {
          try {
            return readSavedLogin(config.loginFile);
          } catch {
            return undefined; // an unreadable or broken file is removed all the same
          }
        })();
        if (!removeSavedLogin(config.loginFile)) {
          process.stdout.write("Not logged in\n");
          return;
        }
        process.stdout.write(`Logged out${saved ? ` of ${saved.url}` : ""}; removed ${config.loginFile}\n`);
      });
    });
}
