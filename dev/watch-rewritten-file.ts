import { readFile, stat } from "node:fs/promises";

/**
 * Watches a file a runner rewrites whole as it goes (its steps, a project's outcomes) every `everyMs`: each new version
 * (by modification time and size) is read and handed to `onChange`; a missing or half-written file is skipped until
 * the next look. Returns the function that stops watching.
 */
export function watchRewrittenFile(path: string, onChange: (text: string) => void, everyMs = 200): () => void {
  let seen = "";
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    void (async () => {
      const info = await stat(path).catch(() => undefined);
      const version = info ? `${info.mtimeMs}:${info.size}` : "";
      if (!info || version === seen) return;
      seen = version;
      onChange(await readFile(path, "utf8"));
    })()
      .catch(() => undefined)
      .finally(() => (busy = false));
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
