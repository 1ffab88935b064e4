import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";

/**
 * The processes a benchmark measures, run as the image runs them: JavaScript compiled from the sources with
 * tsconfig.build.json, as the Dockerfile's build stage compiles them (Node's type stripping at run time costs a
 * process about 30 MB of RSS and start-up time; the image has none of it). The output goes to .kubecrew/bench-build/
 * beside the repository's node_modules; `entries` are further files to compile with their imports (a benchmark's own
 * server process). Returns where the compiled form of a source file is.
 */
export function compileAsImage(entries: string[] = []): (source: string) => string {
  const repo = join(import.meta.dirname, "..");
  const work = join(repo, ".kubecrew");
  const out = join(work, "bench-build");
  rmSync(out, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const build = JSON.parse(readFileSync(join(repo, "tsconfig.build.json"), "utf8").replace(/^\s*\/\/.*$/gm, "")) as {
    include: string[];
  };
  const config = join(work, "tsconfig.bench-build.json");
  writeFileSync(
    config,
    JSON.stringify({
      extends: "../tsconfig.build.json",
      compilerOptions: { rootDir: "..", outDir: "./bench-build" },
      include: [...build.include, ...entries.map((e) => relative(repo, e))].map((p) => `../${p}`),
      exclude: ["../**/*.test.ts"],
    }),
  );
  execFileSync(process.execPath, [join(repo, "node_modules", "typescript", "bin", "tsc"), "-p", config], {
    stdio: "inherit",
  });
  // As the build stage: the files that are not TypeScript (the console's static files, manifests) beside the modules.
  for (const dir of build.include) {
    for (const entry of readdirSync(join(repo, dir), { recursive: true, withFileTypes: true })) {
      const file = relative(repo, join(entry.parentPath, entry.name));
      if (entry.isFile() && !file.endsWith(".ts") && !file.includes("__snapshots__")) {
        cpSync(join(repo, file), join(out, file));
      }
    }
  }
  return (source) => join(out, relative(repo, source).replace(/\.ts$/, ".js"));
}

/**
 * The environment the image gives every process (the Dockerfile's ENV: NODE_ENV, NODE_OPTIONS with its V8 heap flags,
 * and glibc's malloc settings, MALLOC_ARENA_MAX and GLIBC_TUNABLES), but its compile cache: a benchmark's process gets
 * the same.
 */
export function imageEnv(): Record<string, string> {
  const dockerfile = readFileSync(join(import.meta.dirname, "..", "Dockerfile"), "utf8");
  const env: Record<string, string> = {};
  for (const line of dockerfile.match(/^ENV .*$/gm) ?? []) {
    for (const [, name, value] of line.slice(4).matchAll(/(\w+)=(\S+)/g)) {
      if (name !== "NODE_COMPILE_CACHE") env[name!] = value!;
    }
  }
  return env;
}
