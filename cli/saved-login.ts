import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { z } from "zod";
import { CommandFailure } from "./command-failure.ts";

/** What `kubecrew login` saves: the crew API and the bearer token for it. */
export const savedLogin = z.object({ url: z.string(), token: z.string() });
export type SavedLogin = z.infer<typeof savedLogin>;

/** The saved login, or undefined when there is none. */
export function readSavedLogin(file: string): SavedLogin | undefined {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new CommandFailure(`cannot read the saved login ${file}: ${(err as Error).message}`);
  }
  let parsed: ReturnType<typeof savedLogin.safeParse>;
  try {
    parsed = savedLogin.safeParse(JSON.parse(text));
  } catch {
    parsed = savedLogin.safeParse(undefined);
  }
  if (!parsed.success) {
    throw new CommandFailure(`the saved login ${file} is not valid: run kubecrew login again, or kubecrew logout`);
  }
  return parsed.data;
}

/**
 * Saves the login readable by its owner only: the file is written beside its place with mode 0600 and renamed over
 * it, so no other user can read the token at any moment and a crash leaves the old file or the new one, never half.
 */
export function saveLogin(file: string, login: SavedLogin): void {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    writeFileSync(temporary, JSON.stringify(login, null, 2) + "\n", { mode: 0o600, flag: "wx" });
    chmodSync(temporary, 0o600); // the mode given at creation is narrowed by the umask, never widened; be exact
    renameSync(temporary, file);
  } catch (err) {
    rmSync(temporary, { force: true });
    throw new CommandFailure(`cannot save the login to ${file}: ${(err as Error).message}`);
  }
}

/** Removes the saved login; false when there was none. */
export function removeSavedLogin(file: string): boolean {
  try {
    rmSync(file);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw new CommandFailure(`cannot remove the saved login ${file}: ${(err as Error).message}`);
  }
}
