import { describe, expect, test } from "vitest";
import type { V1Pod } from "@kubernetes/client-node";
import { ContainerConfigError, containerEnv, expandVariables, type ObjectSource } from "./env.ts";

const pod: V1Pod = {
  metadata: { name: "job-1-abcde", namespace: "crews", uid: "u-1", labels: { app: "runner" } },
  spec: { containers: [], nodeName: "kubecrew-local", serviceAccountName: "runner" },
};

const source: ObjectSource = {
  configMap: async (name) => (name === "settings" ? { mode: Buffer.from("sequential") } : undefined),
  secret: async (name) => (name === "llm" ? { "api-key": Buffer.from("sk-test") } : undefined),
};

describe("expandVariables", () => {
  test("expands earlier variables, keeps unknown ones and unescapes $$", () => {
    expect(expandVariables("$(A)/$(B)/$$(A)", { A: "x" })).toBe("x/$(B)/$(A)");
  });
});

describe("containerEnv", () => {
  test("resolves value, secretKeyRef, configMapKeyRef and fieldRef in order over the base env", async () => {
    const env = await containerEnv(
      pod,
      {
        name: "main",
        env: [
          { name: "KEY", valueFrom: { secretKeyRef: { name: "llm", key: "api-key" } } },
          { name: "MODE", valueFrom: { configMapKeyRef: { name: "settings", key: "mode" } } },
          { name: "POD", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
          { name: "NS", valueFrom: { fieldRef: { fieldPath: "metadata.namespace" } } },
          { name: "APP", valueFrom: { fieldRef: { fieldPath: "metadata.labels['app']" } } },
          { name: "WHERE", value: "$(NS)/$(POD)" },
        ],
      },
      { PATH: "/bin" },
      source,
    );
    expect(env).toEqual({
      PATH: "/bin",
      KEY: "sk-test",
      MODE: "sequential",
      POD: "job-1-abcde",
      NS: "crews",
      APP: "runner",
      WHERE: "crews/job-1-abcde",
    });
  });

  test("envFrom adds every key with its prefix", async () => {
    const env = await containerEnv(
      pod,
      { name: "main", envFrom: [{ prefix: "CFG_", configMapRef: { name: "settings" } }] },
      {},
      source,
    );
    expect(env).toEqual({ CFG_mode: "sequential" });
  });

  test("a missing Secret is a config error unless optional", async () => {
    const missing = { name: "KEY", valueFrom: { secretKeyRef: { name: "absent", key: "k" } } };
    await expect(containerEnv(pod, { name: "main", env: [missing] }, {}, source)).rejects.toThrow(ContainerConfigError);
    const optional = { name: "KEY", valueFrom: { secretKeyRef: { name: "absent", key: "k", optional: true } } };
    expect(await containerEnv(pod, { name: "main", env: [optional] }, {}, source)).toEqual({});
  });

  test("a missing key names the key and the object", async () => {
    const missing = { name: "KEY", valueFrom: { secretKeyRef: { name: "llm", key: "other" } } };
    await expect(containerEnv(pod, { name: "main", env: [missing] }, {}, source)).rejects.toThrow(
      "couldn't find key other in Secret llm",
    );
  });
});
