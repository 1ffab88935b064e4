/**
 * What the image build depends on (hack/build-image.sh builds it and hack/image-check.sh runs it for real, as
 * hack/kind-e2e.sh does; these checks need no Docker engine): the Dockerfile copies every source the CLI loads and
 * nothing it does not need, the production dependencies are enough, and the CLI starts from a tree laid out exactly as
 * the image lays it out (the sources compiled to JavaScript as the build stage compiles them, the other files beside
 * them, node_modules holding production dependencies only), without loading any TypeScript.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, mkdirSync } from "node:fs";
import { builtinModules } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve, sep } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const repo = join(import.meta.dirname, "..", "..");
const dockerfile = readFileSync(join(repo, "Dockerfile"), "utf8");
const dockerignore = readFileSync(join(repo, ".dockerignore"), "utf8");
const pkg = JSON.parse(readFileSync(join(repo, "package.json"), "utf8")) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
const node = join(repo, "node_modules", ".bin", "node");

/** The folders the build stage compiles (its `find <folders> -type f ! -name '*.ts'` copies their other files). */
const compiledDirs = (/find ((?:\w+ )+)-type f/.exec(dockerfile)?.[1] ?? "").trim().split(" ");
const buildConfig = JSON.parse(
  readFileSync(join(repo, "tsconfig.build.json"), "utf8").replace(/^\s*\/\/.*$/gm, ""),
) as { include: string[] };

/** `COPY <dir> ./<dir>` lines: the source folders compiled in the build stage and the data folders of the image. */
const copiedDirs = [...dockerfile.matchAll(/^COPY (\w+) \.\/(\w+)$/gm)].map((m) => {
  expect(m[1]).toBe(m[2]);
  return m[1]!;
});

/** Module specifiers a file loads at run time (type-only imports are erased by Node and are left out). */
function runtimeImports(text: string): string[] {
  const source = text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
  const specifiers: string[] = [];
  const statement = /^\s*(?:import|export)\s+(type\s+)?(?:[\w*\s{},$]*?\s+from\s+)?["']([^"']+)["']/gm;
  for (const m of source.matchAll(statement)) if (!m[1]) specifiers.push(m[2]!);
  for (const m of source.matchAll(/\bimport\(\s*["']([^"']+)["']\s*\)/g)) specifiers.push(m[1]!);
  return specifiers;
}

function packageName(specifier: string): string {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]!;
}

/** Every repository file reachable from the CLI's entry point, and every package those files import. */
function reachableFromCli(): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const queue = [join(repo, "cli", "main.ts")];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (files.has(file)) continue;
    files.add(file);
    for (const specifier of runtimeImports(readFileSync(file, "utf8"))) {
      if (specifier.startsWith(".")) queue.push(resolve(dirname(file), specifier));
      else if (!specifier.startsWith("node:") && !builtinModules.includes(specifier))
        packages.add(packageName(specifier));
    }
  }
  return { files, packages };
}

/** What the Dockerfile's dependencies stage deletes after `npm ci --omit=dev` (see its comment). */
function removedAfterInstall(path: string): boolean {
  const [, scope, name] = path.split(sep);
  if (scope === "typescript") return true;
  return scope === "@node-llama-cpp" && name !== `linux-${process.arch}`;
}

describe("Dockerfile", () => {
  it("builds on Node 24, installs production dependencies only and runs as a non-root user", () => {
    expect(dockerfile).toMatch(/^ARG NODE_IMAGE=node:24-[\w-]+$/m);
    expect(dockerfile).toMatch(/npm ci --omit=dev/);
    expect(dockerfile).toMatch(/^USER 65532:65532$/m);
    expect(dockerfile).toMatch(/^ENTRYPOINT \["node", "\/app\/cli\/main\.js"\]$/m);
    // The compile cache must be writable with a read-only root filesystem: /tmp is the pods' emptyDir.
    expect(dockerfile).toMatch(/NODE_COMPILE_CACHE=\/tmp\//);
    // V8's young generation held small (the benches run their processes with the same ENV: bench/as-image.ts).
    expect(dockerfile).toMatch(/^ENV .*NODE_OPTIONS=--max-semi-space-size=\d+$/m);
    // glibc's malloc gives large buffers back and keeps two arenas (bench:controller-memory; the benches get it too).
    expect(dockerfile).toMatch(/^ENV .*MALLOC_ARENA_MAX=2 .*GLIBC_TUNABLES=glibc\.malloc\.mmap_threshold=\d+:/m);
    // The final stage has no package manager.
    expect(dockerfile).toMatch(/rm -rf \/usr\/local\/lib\/node_modules\/npm/);
  });

  it("hands a CA bundle to `npm ci` as a build secret only, and pulls nothing but the Node base", () => {
    // A `# syntax=` line would pull a Dockerfile frontend image; the built-in frontend has RUN --mount secrets.
    expect(dockerfile).not.toMatch(/^# syntax=/m);
    expect(dockerfile).toMatch(/^RUN --mount=type=secret,id=ca-bundle /m);
    expect(dockerfile).toContain("NODE_EXTRA_CA_CERTS=/run/secrets/ca-bundle");
    expect(dockerfile).not.toMatch(/^(COPY|ADD) .*ca-(bundle|certificates)/m);
    expect(dockerfile).not.toMatch(/^ENV .*NODE_EXTRA_CA_CERTS/m);
  });

  it("puts `kubecrew` on PATH, the command the chart's pods and the controller's task Jobs run", () => {
    expect(dockerfile).toContain(`exec node /app/cli/main.js "$@"`);
    expect(dockerfile).toContain("> /usr/local/bin/kubecrew");
  });

  it("compiles the sources with tsconfig.build.json, with the TypeScript version package.json pins", () => {
    expect(dockerfile).toMatch(/^FROM \$\{NODE_IMAGE\} AS build$/m);
    expect(dockerfile).toContain(`typescript@$(node -p 'require("./package.json").devDependencies.typescript')`);
    expect(dockerfile).toMatch(/tsc -p tsconfig\.build\.json/);
    expect(dockerfile).toMatch(/^COPY --from=build \/app\/build \.\/$/m);
    // What tsc compiles is what the build stage copies the other files of, and each folder is in the build context.
    expect([...buildConfig.include].sort()).toEqual([...compiledDirs].sort());
    for (const dir of compiledDirs) expect(copiedDirs).toContain(dir);
  });

  it("copies every source folder the CLI loads, and .dockerignore lets exactly those in", () => {
    const { files } = reachableFromCli();
    const folders = new Set([...files].map((f) => relative(repo, f).split(sep)[0]!));
    for (const folder of folders) expect(copiedDirs, `the CLI loads ${folder}/`).toContain(folder);
    const allowed = [...dockerignore.matchAll(/^!(\w+)\/$/gm)].map((m) => m[1]!);
    expect(allowed.sort()).toEqual([...copiedDirs].sort());
    expect(dockerignore).toMatch(/^\*\*\/\*\.test\.ts$/m);
  });

  it("the CLI loads no test file and only packages of `dependencies` (devDependencies are not in the image)", () => {
    const { files, packages } = reachableFromCli();
    expect([...files].filter((f) => f.endsWith(".test.ts") || relative(repo, f).startsWith(`test${sep}`))).toEqual([]);
    for (const name of packages)
      expect(Object.keys(pkg.dependencies), `${name} is imported at run time`).toContain(name);
    // Node 24 comes from the base image; the pinned `node` package is for development only.
    expect(Object.keys(pkg.dependencies)).not.toContain("node");
  });
});

describe("the CLI in the image's layout", () => {
  let app: string;

  beforeAll(() => {
    app = mkdtempSync(join(tmpdir(), "kubecrew-image-"));
    for (const file of ["package.json", "package-lock.json"]) cpSync(join(repo, file), join(app, file));
    // As the build stage: tsc with tsconfig.build.json (emit only), then the files that are not TypeScript beside the
    // compiled modules; the data folders (crds/, examples/) as they are.
    const tsc = join(repo, "node_modules", "typescript", "bin", "tsc");
    execFileSync(node, [tsc, "-p", "tsconfig.build.json", "--outDir", app], { cwd: repo, stdio: "pipe" });
    for (const dir of copiedDirs) {
      cpSync(join(repo, dir), join(app, dir), {
        recursive: true,
        filter: (src) => !src.endsWith(".ts") && !src.includes(`${sep}__snapshots__`),
      });
    }
    // node_modules as `npm ci --omit=dev` leaves it: the top-level production packages (their own nested
    // node_modules come along with them).
    const listed = execFileSync("npm", ["ls", "--omit=dev", "--all", "--parseable"], {
      cwd: repo,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    });
    const topLevel = listed
      .split("\n")
      .map((line) => relative(repo, line.trim()))
      .filter((path) => path.startsWith(`node_modules${sep}`) && path.split(`node_modules${sep}`).length === 2)
      .filter((path) => !removedAfterInstall(path));
    for (const path of topLevel) {
      mkdirSync(dirname(join(app, path)), { recursive: true });
      symlinkSync(join(repo, path), join(app, path));
    }
  }, 180_000);

  afterAll(() => {
    if (app) rmSync(app, { recursive: true, force: true });
  });

  it("removes after npm ci what the Dockerfile says it removes: node-llama-cpp's GPU and other builds, TypeScript", () => {
    expect(dockerfile).toMatch(/keep="linux-\$\(node -p process\.arch\)"/);
    expect(dockerfile).toMatch(
      /for build in node_modules\/@node-llama-cpp\/\*; do \[ "\$\{build##\*\/\}" = "\$keep" \] \|\| rm -rf "\$build"; done/,
    );
    expect(dockerfile).toMatch(/rm -rf node_modules\/typescript\n/);
    expect(existsSync(join(app, "node_modules", "@node-llama-cpp", `linux-${process.arch}`))).toBe(true);
    expect(readdirSync(join(app, "node_modules", "@node-llama-cpp"))).toEqual([`linux-${process.arch}`]);
  });

  it("holds the compiled modules and no TypeScript", () => {
    expect(existsSync(join(app, "cli", "main.js"))).toBe(true);
    const typescript = (readdirSync(app, { recursive: true }) as string[]).filter(
      (f) => f.endsWith(".ts") && !f.startsWith(`node_modules${sep}`),
    );
    expect(typescript).toEqual([]);
  });

  it("holds no development-only package", () => {
    for (const dev of ["vitest", "typescript", "eslint", "node", "oidc-provider"]) {
      expect(existsSync(join(app, "node_modules", dev)), dev).toBe(false);
    }
  });

  it.each(["api", "controller", "integrations", "runner", "dev", "token", "client"])(
    "`kubecrew %s --help` starts",
    (command) => {
      // Type stripping off: a module still importing a .ts file would fail to load.
      const run = spawnSync(node, ["--no-experimental-strip-types", join(app, "cli", "main.js"), command, "--help"], {
        cwd: app,
        encoding: "utf8",
        env: { PATH: process.env.PATH, NODE_COMPILE_CACHE: join(app, ".compile-cache") },
      });
      expect(run.stderr).toBe("");
      expect(run.status).toBe(0);
      expect(run.stdout).toContain(`Usage: kubecrew ${command}`);
    },
  );
});
