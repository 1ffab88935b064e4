import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { resolveTarget } from "./api-target.ts";
import { clientConfigSchema, parseApiUrl } from "./client-config.ts";
import { saveLogin } from "./saved-login.ts";

const saved = { url: "http://127.0.0.1:8080", token: "kco_saved" };

function configWith(env: Record<string, string>, login?: typeof saved) {
  const home = mkdtempSync(join(tmpdir(), "kubecrew-target-"));
  const config = clientConfigSchema.parse({ HOME: home, ...env });
  if (login) saveLogin(config.loginFile, login);
  return config;
}

describe("which API and token a command uses", () => {
  it("takes --url/--token over the environment, and the environment over the saved login", () => {
    const env = { KUBECREW_URL: "http://10.0.0.1:80/", KUBECREW_TOKEN: "kco_env" };
    expect(resolveTarget({ url: "https://api.example/x/", token: "kco_flag" }, configWith(env, saved))).toEqual({
      url: "https://api.example/x",
      token: "kco_flag",
    });
    expect(resolveTarget({}, configWith(env, saved))).toEqual({ url: "http://10.0.0.1", token: "kco_env" });
    expect(resolveTarget({}, configWith({}, saved))).toEqual(saved);
    expect(resolveTarget({ token: "kco_flag" }, configWith({}, saved))).toEqual({ ...saved, token: "kco_flag" });
  });

  it("never sends the saved token to another URL", () => {
    expect(() => resolveTarget({ url: "http://127.0.0.1:9090" }, configWith({}, saved))).toThrow(
      /^no token for http:\/\/127\.0\.0\.1:9090: /,
    );
    expect(() => resolveTarget({}, configWith({ KUBECREW_URL: "http://other:8080" }, saved))).toThrow(/^no token for/);
    expect(resolveTarget({ url: "http://127.0.0.1:8080/" }, configWith({}, saved))).toEqual(saved);
  });

  it("says what to do when nothing names an API", () => {
    expect(() => resolveTarget({}, configWith({}))).toThrow(/^no crew API given: pass --url, set KUBECREW_URL/);
  });

  it("keeps the login under XDG_CONFIG_HOME when it is absolute, else under ~/.config", () => {
    expect(clientConfigSchema.parse({ HOME: "/home/u", XDG_CONFIG_HOME: "/cfg" }).loginFile).toBe(
      "/cfg/kubecrew/config.json",
    );
    expect(clientConfigSchema.parse({ HOME: "/home/u", XDG_CONFIG_HOME: "rel" }).loginFile).toBe(
      "/home/u/.config/kubecrew/config.json",
    );
  });

  it.each([
    ["http://127.0.0.1:8080/", "http://127.0.0.1:8080"],
    ["https://crews.example/api//", "https://crews.example/api"],
    ["ftp://crews.example", undefined],
    ["https://user:secret@crews.example", undefined],
    ["https://crews.example/?token=x", undefined],
    ["crews.example", undefined],
  ])("reads %s as the API's base URL %s", (text, url) => {
    expect(parseApiUrl(text)).toBe(url);
  });
});
