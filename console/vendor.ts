import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/**
 * The UI library the console's modules import, served from node_modules as it was installed from the lockfile: Preact
 * (preact, preact/hooks) and htm (JSX-like tagged templates, so no build step). preact/hooks imports the bare name
 * "preact", which a browser resolves only through an import map (an inline script the Content-Security-Policy
 * refuses), so that one import is pointed at the served file instead.
 */
export interface VendorModule {
  file: string;
  source: string;
}

export function vendorModules(): Map<string, VendorModule> {
  const read = (specifier: string) => readFileSync(fileURLToPath(import.meta.resolve(specifier)), "utf8");
  const hooks = read("preact/hooks");
  const bare = /from\s*"preact"/g;
  if ((hooks.match(bare) ?? []).length !== 1) {
    throw new Error('preact/hooks no longer imports "preact" exactly once: check console/vendor.ts');
  }
  return new Map([
    ["preact.mjs", { file: "preact", source: read("preact") }],
    ["hooks.mjs", { file: "preact/hooks", source: hooks.replace(bare, 'from"./preact.mjs"') }],
    ["htm.mjs", { file: "htm", source: read("htm") }],
  ]);
}
