import js from "@eslint/js";
import boundaries from "eslint-plugin-boundaries";
import tseslint from "typescript-eslint";

/**
 * The layers of the code (see ARCHITECTURE.md): an import points down only.
 *   core/ (the domain) ← platform/ (the HTTP and Redis kit) ← kube/runtime/ (the generic controller runtime: client,
 *   informers, queues, leases, elections, health, metrics — no word of crews; it imports platform/ only) ← kube/
 *   (kubecrew's resources, names and typed objects) ← api/ controller/ runner/ integrations/ dev/ ← cli/ (the
 *   `kubecrew` entry point). api/, runner/ and dev/ never import controller/; dev/ runs api/, runner/ and
 *   integrations/ in one process. core/ imports no HTTP or Redis library (no-restricted-imports below).
 * console/ (the web console's server side) stands beside api/ and dev/ and imports only core/ and kube/; api/ and dev/
 * mount it. Its browser modules (console/static/) import nothing of the server's.
 * hack/, test/, bench/ and examples/ are tooling around the code: they may import any layer, and no layer imports them.
 * Unit tests (*.test.ts beside the code) are tooling too: a contract test may load both sides of the contract.
 */
const base = ["core", "platform", "kube-runtime", "kube"];
const layers = {
  core: [],
  platform: ["core"],
  "kube-runtime": ["platform"],
  kube: ["core", "platform", "kube-runtime"],
  console: [...base],
  api: [...base, "console"],
  runner: [...base],
  integrations: [...base],
  controller: [...base],
  dev: [...base, "api", "runner", "integrations", "console"],
  cli: [...base, "api", "controller", "runner", "integrations", "dev", "console"],
};
/** Where each layer lives (kube/runtime/ before kube/: the first pattern a file matches names its layer). */
const folders = { "kube-runtime": "kube/runtime" };
const order = ["kube-runtime", ...Object.keys(layers).filter((layer) => layer !== "kube-runtime")];

/** The HTTP servers' and clients' and Redis' libraries: platform/ wraps them, core/ (the domain) imports none. */
const httpAndRedis = ["express", "ioredis", "undici", "body-parser", "node:http", "node:https", "http", "https"];

export default tseslint.config(
  { ignores: ["node_modules/", "charts/", "crds/", "coverage/", "build/", ".kubecrew/"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": "error",
    },
  },
  {
    // The console's browser modules: ES modules run by the browser, not Node.
    files: ["console/static/**/*.js"],
    languageOptions: {
      globals: Object.fromEntries(
        [
          "window",
          "document",
          "location",
          "URLSearchParams",
          "fetch",
          "EventSource",
          "addEventListener",
          "removeEventListener",
          "setInterval",
          "clearInterval",
        ].map((name) => [name, "readonly"]),
      ),
    },
  },
  {
    files: ["core/**/*.ts"],
    ignores: ["**/*.test.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          paths: httpAndRedis.map((name) => ({
            name,
            message: "core/ is the domain: HTTP and Redis belong to platform/ (eslint.config.js, ARCHITECTURE.md)",
          })),
          patterns: [
            { group: ["express/*", "undici/*", "ioredis/*"], message: "core/ imports no HTTP or Redis library" },
          ],
        },
      ],
    },
  },
  {
    files: ["**/*.ts", "**/*.js"],
    ignores: ["**/*.test.ts", "console/static/**"],
    plugins: { boundaries },
    settings: {
      "boundaries/elements": [
        ...order.map((layer) => ({ type: layer, pattern: `${folders[layer] ?? layer}/**`, partialMatch: false })),
        { type: "tooling", pattern: "{hack,test,bench,examples,bin}/**", partialMatch: false },
      ],
    },
    rules: {
      "boundaries/dependencies": [
        "error",
        {
          default: "disallow",
          message:
            "layering (eslint.config.js): {{from.type}} may not import {{to.type}} — imports point down: core ← platform ← kube-runtime ← kube ← api, controller, runner, integrations, dev ← cli (kube/runtime imports platform/ only)",
          policies: [
            ...Object.entries(layers).map(([layer, below]) => ({
              from: { element: { type: layer } },
              allow: { to: { element: { types: { anyOf: [layer, ...below] } } } },
            })),
            { from: { element: { type: "tooling" } }, allow: { to: { element: { types: { anyOf: ["*"] } } } } },
          ],
        },
      ],
    },
  },
);
