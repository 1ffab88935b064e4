import { execFileSync } from "node:child_process";
import { resolve } from "node:path";

/**
 * The `model` project's real model, in the cache outside the clone: hack/local-model.ts pulls it on a cold machine
 * (hack/test.sh runs it before vitest too) and only checks its digest on a warm one.
 */
export default function setup() {
  execFileSync(process.execPath, [resolve(import.meta.dirname, "../../hack/local-model.ts")], { stdio: "inherit" });
}
