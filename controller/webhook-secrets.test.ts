import { beforeEach, describe, expect, it } from "vitest";
import pino from "pino";
import type { KubeObject } from "../kube/runtime/client.ts";
import { Informer } from "../kube/runtime/informer.ts";
import { CREWS, resourcePath, SECRETS } from "../kube/resources.ts";
import { RecordingKube } from "../test/support/recording-kube.ts";
import { MissingSigningSecretError, WEBHOOK_SECRET_ANNOTATION, WebhookSecrets } from "./webhook-secrets.ts";

const NS = "team-a";
const secret = (name: string, key: string) => ({
  metadata: { name, namespace: NS },
  data: { secret: Buffer.from(key).toString("base64") },
});

describe("WebhookSecrets", () => {
  let kube: RecordingKube;
  let crews: Informer<KubeObject>;
  let secrets: WebhookSecrets;

  beforeEach(() => {
    kube = new RecordingKube();
    crews = new Informer<KubeObject>({ client: kube, log: pino({ level: "silent" }), path: resourcePath(CREWS, NS) });
    secrets = new WebhookSecrets({ client: kube, crews, secretKey: "secret" });
  });

  it("reads the crew's Secret (<crew>-webhook) once and keeps it for a while", async () => {
    kube.seed(resourcePath(SECRETS, NS), secret("research-webhook", "crew-key"));
    expect(await secrets.secretFor(NS, "research")).toBe("crew-key");
    expect(await secrets.secretFor(NS, "research")).toBe("crew-key");
    expect(kube.reads).toEqual([resourcePath(SECRETS, NS, "research-webhook")]);
  });

  it("reads the Secret the crew's annotation names", async () => {
    const annotations = { [WEBHOOK_SECRET_ANNOTATION]: "shared-hooks" };
    crews.upsert({ metadata: { name: "research", namespace: NS, annotations } });
    kube.seed(resourcePath(SECRETS, NS), secret("shared-hooks", "shared-key"));
    expect(await secrets.secretFor(NS, "research")).toBe("shared-key");
  });

  it("refuses to answer for a crew whose Secret is not there yet, and reads again next time", async () => {
    await expect(secrets.secretFor(NS, "research")).rejects.toThrow(MissingSigningSecretError);
    kube.seed(resourcePath(SECRETS, NS), secret("research-webhook", "generated-key"));
    expect(await secrets.secretFor(NS, "research")).toBe("generated-key");
    expect(kube.reads).toHaveLength(2);
  });

  it("refuses a Secret without the key, naming the Secret and the key, not a value", async () => {
    kube.seed(resourcePath(SECRETS, NS), {
      metadata: { name: "research-webhook", namespace: NS },
      data: { other: "eA==" },
    });
    await expect(secrets.secretFor(NS, "research")).rejects.toThrow(
      'the crew\'s webhook signing Secret team-a/research-webhook has no key "secret"',
    );
  });
});
