import { readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * This node has no images: it runs every container's command on the machine. What an image would add to its
 * containers' environment (a Dockerfile's ENV) is declared to it instead, one file per image in its state directory:
 * `images/<encodeURIComponent(image)>.json` holding `{"env": {"NAME": "value"}}` — e.g. a user's CrewAI project image
 * as PYTHONPATH pointing at the project's source on this machine. Read at each container start, so a test may declare
 * an image while the node runs.
 */
export const LOCAL_IMAGES_DIR = "images";

export function localImageFile(stateDir: string, image: string): string {
  return join(stateDir, LOCAL_IMAGES_DIR, `${encodeURIComponent(image)}.json`);
}

/** The environment `image` declares (none when it declares nothing, or its file is not `{"env": {…strings}}`). */
export function localImageEnv(stateDir: string, image: string | undefined): Record<string, string> {
  if (!image) return {};
  let declared: unknown;
  try {
    declared = JSON.parse(readFileSync(localImageFile(stateDir, image), "utf8"));
  } catch {
    return {};
  }
  const env = (declared as { env?: unknown } | null)?.env;
  if (typeof env !== "object" || env === null) return {};
  return Object.fromEntries(
    Object.entries(env).filter((entry): entry is [string, string] => typeof entry[1] === "string"),
  );
}
