import js from "@eslint/js";
import boundaries from "eslint-plugin-boundaries";
import tseslint from "typescript-eslint";

/**
 * The layers of the code (see ARCHITECTURE.md): an import points down only.
 *   core/ (the domain) ← kube/ (Kubernetes client, informers, names) ← api/ controller/ runner/ integrations/ dev/
 *   ← cli/ (the `kubecrew` entry point). api/, runner/ and dev/ never import controller/; dev/ runs api/, runner/ and
 *   integrations/ in one process.
 * console/ (the web console's server side) stands beside api/ and dev/ and imports only core/ and kube/; api/ and dev/
 * mount it. Its browser modules (console/static/) import nothing of the server's.
 * hack/, test/, bench/ and examples/ are tooling around the code: they may import any layer, and no layer imports them.
 * Unit tests (*.test.ts beside the code) are tooling too: a contract test may load both sides of the contract.
 */
const layers = {
  core: [],
  kube: ["core"],
  console: ["core", "kube"],
  api: ["core", "kube", "console"],
  runner: ["core", "kube"],
  integrations: ["core", "kube"],
  controller: ["core", "kube"],
  dev: ["core", "kube", "api", "runner", "integrations", "console"],
  cli: ["core", "kube", "api", "controller", "runner", "integrations", "dev", "console"],
};

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
    files: ["**/*.ts", "**/*.js"],
    ignores: ["**/*.test.ts", "console/static/**"],
    plugins: { boundaries },
    settings: {
      "boundaries/elements": [
        ...Object.keys(layers).map((layer) => ({ type: layer, pattern: `${layer}/**`, partialMatch: false })),
        { type: "tooling", pattern: "{hack,test,bench,examples,bin}/**", partialMatch: false },
      ],
    },
    rules: {
      "boundaries/dependencies": [
        "error",
        {
          default: "disallow",
          message:
            "layering (eslint.config.js): {{from.type}}/ may not import {{to.type}}/ — imports point down: core ← kube ← api, controller, runner, integrations, dev ← cli",
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
