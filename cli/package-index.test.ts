import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { findPackageIndex, parsePipConfig, pipConfigFiles, pipDefaultIndex } from "./package-index.ts";

let home: string;
/** An environment whose pip configuration is only what a test writes under its own home folder. */
let env: Record<string, string>;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), "kubecrew-pip-"));
  env = { HOME: home, XDG_CONFIG_DIRS: join(home, "xdg"), PATH: join(home, "no-python") };
});

function write(path: string, text: string): string {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, text);
  return path;
}

describe("pip.conf as pip reads it", () => {
  it("reads sections, `=` and `:`, comments, continued values, and names in pip's spelling", () => {
    const config = parsePipConfig(
      "# a comment\n[global]\nIndex_URL = https://a.example/simple\n; another\ntimeout: 60\n" +
        "[install]\nextra-index-url =\n    https://b.example/simple\n    https://c.example/simple\n",
    );
    expect(Object.fromEntries(config)).toEqual({
      "global.index-url": "https://a.example/simple",
      "global.timeout": "60",
      "install.extra-index-url": "https://b.example/simple\nhttps://c.example/simple",
    });
  });

  it("finds the user's file, [download] and [install] ahead of [global], and PIP_CONFIG_FILE ahead of them all", async () => {
    const user = write(join(home, ".config", "pip", "pip.conf"), "[global]\nindex-url = https://user.example/simple\n");
    expect(await findPackageIndex(env)).toEqual({
      url: "https://user.example/simple",
      from: `${user} [global] index-url`,
    });
    write(join(home, ".pip", "pip.conf"), "[install]\nindex-url = https://legacy.example/simple\n");
    expect(await findPackageIndex(env)).toMatchObject({ url: "https://legacy.example/simple" });
    const xdg = write(join(home, "xdg-config", "pip", "pip.conf"), "[download]\nindex-url = https://xdg.example/s\n");
    expect(await findPackageIndex({ ...env, XDG_CONFIG_HOME: join(home, "xdg-config") })).toEqual({
      url: "https://xdg.example/s",
      from: `${xdg} [download] index-url`,
    });
    // PIP_CONFIG_FILE naming a file: the user's files are not read at all.
    const named = write(join(home, "named.conf"), "[global]\nindex-url = https://named.example/simple\n");
    expect(await findPackageIndex({ ...env, PIP_CONFIG_FILE: named })).toMatchObject({
      url: "https://named.example/simple",
    });
    expect(pipConfigFiles({ ...env, PIP_CONFIG_FILE: named })).toEqual([
      join(home, "xdg", "pip", "pip.conf"),
      "/etc/pip.conf",
      named,
    ]);
  });

  it("takes KUBECREW_PACKAGE_INDEX_URL, then PIP_INDEX_URL, ahead of any file", async () => {
    write(join(home, ".config", "pip", "pip.conf"), "[global]\nindex-url = https://user.example/simple\n");
    const both = {
      ...env,
      PIP_INDEX_URL: "https://pip.example/simple",
      KUBECREW_PACKAGE_INDEX_URL: " https://k.example/ ",
    };
    expect(await findPackageIndex(both)).toEqual({ url: "https://k.example/", from: "KUBECREW_PACKAGE_INDEX_URL" });
    expect(await findPackageIndex({ ...both, KUBECREW_PACKAGE_INDEX_URL: "" })).toEqual({
      url: "https://pip.example/simple",
      from: "PIP_INDEX_URL",
    });
  });

  it("finds none with PIP_CONFIG_FILE=/dev/null and no Python on the PATH", async () => {
    write(join(home, ".config", "pip", "pip.conf"), "[global]\nindex-url = https://user.example/simple\n");
    expect(await findPackageIndex({ ...env, PIP_CONFIG_FILE: "/dev/null" })).toBeUndefined();
  });
});

describe("pip's default index", () => {
  it("is asked of the machine's python3 -m pip when nothing configures one", async () => {
    // npm test's machines have Python 3 with pip (the crewai runtime's adapter needs it).
    const found = await pipDefaultIndex({ ...env, PATH: process.env.PATH ?? "" });
    expect(found?.from).toBe("the default index of python3 -m pip");
    expect(new URL(found!.url).pathname).toBe("/simple");
  });
});
