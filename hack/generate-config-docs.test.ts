import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { z } from "zod";
import { describe, expect, it } from "vitest";
import { resolveProviderSettings } from "../integrations/provider-settings.ts";
import { configReference, describeVariable } from "./config-reference.ts";
import { CONFIG_DOC, expectedConfigDoc, MARKER } from "./generate-config-docs.ts";

const root = join(import.meta.dirname, "..");

/** The product's folders: every variable read in them must be documented (tooling and tests may read their own). */
const PRODUCT = ["api", "cli", "console", "controller", "core", "dev", "integrations", "kube", "platform", "runner"];

function productSources(): string[] {
  return PRODUCT.flatMap((dir) =>
    readdirSync(join(root, dir), { recursive: true, encoding: "utf8" })
      .filter((file) => file.endsWith(".ts") && !file.endsWith(".test.ts"))
      .map((file) => join(root, dir, file)),
  );
}

/** The CrewAI adapter's Python package (its tests are under crewai-adapter/tests/, apart). */
const ADAPTER = join(root, "crewai-adapter", "kubecrew_crewai");

function adapterSources(): string[] {
  return readdirSync(ADAPTER, { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".py"))
    .map((file) => join(ADAPTER, file));
}

/** How the adapter names a variable it reads: `os.environ.get("X")`, `env.get("X")`, `environ["X"]`, `= "KUBECREW_X"`. */
const PYTHON_READS = [
  /\b(?:environ|env)\.get\(\s*"([A-Z][A-Z0-9_]+)"/g,
  /\benviron\[\s*"([A-Z][A-Z0-9_]+)"\s*\]/g,
  /=\s*"(KUBECREW_[A-Z0-9_]*[A-Z0-9])"/g,
];

function pythonVariablesRead(text: string): Set<string> {
  const code = text.replace(/#[^\n]*/g, "");
  return new Set(PYTHON_READS.flatMap((pattern) => [...code.matchAll(pattern)].map((match) => match[1]!)));
}

/** How product code names an environment variable it reads (or sets for a process of its own). */
const READS = [
  /\benv\??\.([A-Z][A-Z0-9_]+)\b/g, // process.env.X, env.X, env?.X
  /\benv\[\s*"([A-Z][A-Z0-9_]+)"\s*\]/g, // env["X"]
  /\b(KUBECREW_[A-Z0-9_]*[A-Z0-9])\b/g, // any name of kubecrew's own, in a schema, a constant or a string
  /_ENV = "([A-Z][A-Z0-9_]+)"/g, // const X_ENV = "NAME"
  /^\s+([A-Z][A-Z0-9_]{2,}): z\b/gm, // a key of a zod schema over the environment
];

/** Comments may give examples (`mcp-token/token → KUBECREW_SECRET_MCP_TOKEN_TOKEN`): only code counts. */
const withoutComments = (text: string) => text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|\s)\/\/[^\n]*/g, "$1");

function variablesRead(text: string): Set<string> {
  const code = withoutComments(text);
  return new Set(READS.flatMap((pattern) => [...code.matchAll(pattern)].map((match) => match[1]!)));
}

/**
 * Reads by a name computed at run time (`env[name]`), which no pattern above can see: allowed in these files only, each
 * with the documented entries that cover the names it computes. An identifier ending in `_ENV` is a constant whose
 * value READS finds (`_ENV = "NAME"`), so it may be read anywhere.
 */
const COMPUTED_READS: Record<string, string> = {
  "cli/model-pull.ts": "the hub's variables, KUBECREW_HUGGING_FACE_URL then HF_ENDPOINT (HUGGING_FACE_ENV)",
  "cli/package-index.ts": "the index's variables, KUBECREW_PACKAGE_INDEX_URL then PIP_INDEX_URL",
  "core/config.ts": "variable()'s reader: each name is a field's variable, in a component's schema",
  "dev/embedded-integrations-config.ts":
    "given(name): the integrations service's KUBECREW_* names, literal at each call",
  "integrations/provider-settings.ts":
    "each provider's and product's KUBECREW_<ID>_* by its own name (providerVariables; every name read is checked below)",
  "runner/llm.ts":
    "an API key: KUBECREW_LLM_API_KEY, KUBECREW_SECRET_<SECRET>_<KEY>, the provider's (llmKeyVariables), the agent's own apiKeyEnv",
  "runner/mcp-headers.ts": "KUBECREW_SECRET_<SECRET>_<KEY> (mcpHeaderVariables)",
};

/** The index expressions of reads by a computed name: `env[name]`, `process.env[x]`, `env?.[x]`. */
function computedReads(text: string): string[] {
  const code = withoutComments(text);
  return [...code.matchAll(/\benv\??\.?\[\s*([^\]"'\s][^\]]*)\]/g)]
    .map((match) => match[1]!.trim())
    .filter((expression) => !/^[A-Z][A-Z0-9_]*_ENV$/.test(expression) && !/^`[^$`]*`$/.test(expression));
}

/**
 * The variables docs/configuration.md's generated tables list, as patterns: a placeholder (`KUBECREW_<PROVIDER>_CLIENT_ID`)
 * stands for any name in its place (`KUBECREW_GOOGLE_CLIENT_ID`).
 */
function documentedIn(doc: string): RegExp[] {
  const generated = doc.slice(doc.indexOf(MARKER));
  return [...generated.matchAll(/^\| `([A-Z0-9_<>]+)` +\|/gm)].map(
    (match) => new RegExp(`^${match[1]!.replace(/<[A-Z]+>/g, "[A-Z0-9]+(?:_[A-Z0-9]+)*?")}$`),
  );
}

describe("docs/configuration.md", () => {
  it("is what `npm run generate:config-docs` writes from the components' schemas", async () => {
    const onDisk = readFileSync(CONFIG_DOC, "utf8");
    expect(onDisk, "docs/configuration.md is out of date: run npm run generate:config-docs").toBe(
      await expectedConfigDoc(onDisk),
    );
    // Prettier formats the whole document: seconds on a loaded machine.
  }, 60_000);

  it("documents every environment variable the product reads", () => {
    const documented = documentedIn(readFileSync(CONFIG_DOC, "utf8"));
    const undocumented: string[] = [];
    const reads = [
      ...productSources().map((file) => [file, variablesRead(readFileSync(file, "utf8"))] as const),
      ...adapterSources().map((file) => [file, pythonVariablesRead(readFileSync(file, "utf8"))] as const),
    ];
    for (const [file, names] of reads) {
      for (const name of names) {
        if (!documented.some((pattern) => pattern.test(name))) undocumented.push(`${name} (${relative(root, file)})`);
      }
    }
    expect(
      undocumented,
      "describe these in the component's config schema (or its variables table), add it to hack/generate-config-docs.ts and run npm run generate:config-docs",
    ).toEqual([]);
  }, 60_000);

  it("reads a variable by a computed name only where the names it computes are documented", () => {
    const computing: Record<string, string[]> = {};
    for (const file of productSources()) {
      const reads = computedReads(readFileSync(file, "utf8"));
      if (reads.length > 0) computing[relative(root, file)] = reads;
    }
    const unexplained = Object.entries(computing)
      .filter(([file]) => !(file in COMPUTED_READS))
      .map(([file, reads]) => `${file}: env[${reads.join("], env[")}]`);
    expect(
      unexplained,
      "read the variable by its literal name (process.env.NAME), or name the file and the documented entries that cover it in COMPUTED_READS",
    ).toEqual([]);
    // An entry whose file no longer computes a name goes, so the list stays the truth.
    expect(Object.keys(COMPUTED_READS).filter((file) => !(file in computing))).toEqual([]);
  }, 60_000);

  it("lists by its own name each variable the integrations service reads for its providers and their products", () => {
    const generated = readFileSync(CONFIG_DOC, "utf8").split(MARKER)[1]!;
    const listed = new Set([...generated.matchAll(/^\| `([A-Z0-9_]+)` +\|/gm)].map((match) => match[1]!));
    const read = new Set<string>();
    const recording = new Proxy<Record<string, string | undefined>>(
      {},
      {
        get(_, name) {
          if (typeof name === "string") read.add(name);
          return undefined;
        },
      },
    );
    resolveProviderSettings(recording);
    expect(read).toContain("KUBECREW_GOOGLE_GMAIL_CLIENT_ID");
    expect([...read].filter((name) => !listed.has(name))).toEqual([]);
  });

  it("refuses to write when the marker between the hand-written and the generated part is gone", async () => {
    await expect(expectedConfigDoc("# Configuration\n\nNo marker here.\n")).rejects.toThrow(MARKER);
  });
});

describe("variablesRead", () => {
  it("finds reads through process.env, an env object, a schema key and a named constant, not in comments", () => {
    const text = [
      "const a = process.env.KUBECONFIG;",
      'const b = env["OTEL_SERVICE_NAME"] ?? env?.HOME;',
      "export const schema = z.object({",
      "  PORT: z.coerce.number(),",
      "});",
      'export const MODEL_DIR_ENV = "SOME_DIR";',
      "// e.g. KUBECREW_IN_A_COMMENT",
      "/** KUBECREW_IN_A_DOC_COMMENT */",
      'const url = "http://example.test"; // KUBECREW_AFTER_CODE',
    ].join("\n");
    expect([...variablesRead(text)].sort()).toEqual(["HOME", "KUBECONFIG", "OTEL_SERVICE_NAME", "PORT", "SOME_DIR"]);
  });
});

describe("pythonVariablesRead", () => {
  it("finds the adapter's reads through os.environ, an env mapping and a KUBECREW_ constant, not in comments", () => {
    const text = [
      'pid = os.environ.get("KUBECREW_RUNNER_PID", "")',
      'home = os.environ["HOME"]',
      'service = env.get("OTEL_SERVICE_NAME", "")',
      'TRACE_CONTENT = "KUBECREW_TRACE_CONTENT"',
      '# env.get("IN_A_COMMENT")',
      "os.environ[name] = value",
    ].join("\n");
    expect([...pythonVariablesRead(text)].sort()).toEqual([
      "HOME",
      "KUBECREW_RUNNER_PID",
      "KUBECREW_TRACE_CONTENT",
      "OTEL_SERVICE_NAME",
    ]);
  });
});

describe("documentedIn and computedReads", () => {
  const doc = `${MARKER}\n\n| variable | default | meaning |\n| --- | --- | --- |\n| \`KUBECREW_<PROVIDER>_CLIENT_ID\` | | x |\n| \`PORT\` | \`8080\` | y |\n`;

  it("takes a placeholder for any name in its place, and nothing else", () => {
    const documented = documentedIn(doc);
    const known = (name: string) => documented.some((pattern) => pattern.test(name));
    expect(["KUBECREW_GOOGLE_CLIENT_ID", "KUBECREW_GOOGLE_GMAIL_CLIENT_ID", "PORT"].filter(known)).toHaveLength(3);
    expect(["KUBECREW_GOOGLE_CLIENT_SECRET", "GOOGLE_CLIENT_ID", "PORTS", "HOST"].filter(known)).toEqual([]);
  });

  it("finds reads by a computed name, not by a literal or an _ENV constant", () => {
    const text = 'const a = env[name]; process.env["PORT"]; env[MODEL_DIR_ENV]; env[`HOME`]; env?.[`X_${y}`];';
    expect(computedReads(text)).toEqual(["name", "`X_${y}`"]);
  });
});

describe("configReference", () => {
  const schema = z.object({
    B_WITH_DEFAULT: z.coerce.number().default(8).describe("A number."),
    A_REQUIRED: z.string().describe("Needed | always."),
    C_COMPUTED: z.string().optional().meta({ description: "Computed.", defaultText: "one per CPU" }),
    D_OPTIONAL: z.string().optional().describe("May be unset."),
  });

  it("gives each variable its default, computed default or `required`, in name order, escaping pipes", () => {
    const text = configReference([{ component: "x", title: "The x", schemas: [schema] }]);
    expect(text.split("\n")).toEqual([
      "## The x",
      "",
      "| variable | default | meaning |",
      "| --- | --- | --- |",
      "| `A_REQUIRED` | required | Needed \\| always. |",
      "| `B_WITH_DEFAULT` | `8` | A number. |",
      "| `C_COMPUTED` | one per CPU | Computed. |",
      "| `D_OPTIONAL` |  | May be unset. |",
      "",
    ]);
  });

  it("refuses a variable without a description", () => {
    const bare = z.object({ UNDESCRIBED: z.string() });
    expect(() => configReference([{ component: "x", title: "x", schemas: [bare] }])).toThrow(/UNDESCRIBED/);
  });

  it("reads the default and description through a transform and an optional wrapper", () => {
    const list = z
      .string()
      .default("a,b")
      .transform((s) => s.split(","))
      .describe("A list.");
    expect(describeVariable(list)).toEqual({ description: "A list.", default: "`a,b`" });
    expect(describeVariable(z.string().min(32).describe("A key.").optional())).toEqual({
      description: "A key.",
      default: "",
    });
  });
});
