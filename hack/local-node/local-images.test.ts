import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { localImageEnv, localImageFile } from "./local-images.ts";

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function declare(image: string, content: string): string {
  dir ??= mkdtempSync(join(tmpdir(), "local-images-"));
  const file = localImageFile(dir, image);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, content);
  return dir;
}

it("gives a container the environment its image declares, and nothing for an image that declares none", () => {
  const state = declare("registry.example/team/tidepool:1", JSON.stringify({ env: { PYTHONPATH: "/src", N: 1 } }));
  expect(localImageEnv(state, "registry.example/team/tidepool:1")).toEqual({ PYTHONPATH: "/src" });
  expect(localImageEnv(state, "registry.example/team/tidepool:2")).toEqual({});
  expect(localImageEnv(state, undefined)).toEqual({});
});

it("ignores a declaration that is not JSON or has no env object", () => {
  const state = declare("a:1", "{not json");
  declare("b:1", JSON.stringify({ env: "PYTHONPATH=/src" }));
  expect(localImageEnv(state, "a:1")).toEqual({});
  expect(localImageEnv(state, "b:1")).toEqual({});
});
