import { accessSync, existsSync, readFileSync } from "node:fs";
import type https from "node:https";
import { isIPv6 } from "node:net";
import { delimiter, dirname, isAbsolute, join } from "node:path";
import { load } from "js-yaml";
import { z } from "zod";
import {
  newClusters,
  newContexts,
  newUsers,
  type Cluster,
  type Context,
  type User,
} from "@kubernetes/client-node/dist/config_types.js";
import { ExecAuth } from "@kubernetes/client-node/dist/exec_auth.js";
import { FileAuth } from "@kubernetes/client-node/dist/file_auth.js";

/**
 * What the KubeClient needs of a kubeconfig: the current cluster's server, and the TLS material and credentials of the
 * current user for a request. @kubernetes/client-node's KubeConfig has both (the tests hand theirs in); so does
 * `Kubeconfig` below, which the processes load.
 */
export interface KubeAccess {
  getCurrentCluster(): { readonly server: string } | null;
  applyToHTTPSOptions(options: https.RequestOptions): Promise<void>;
}

/**
 * The kubeconfig of a process, without the generated API client.
 *
 * @kubernetes/client-node's KubeConfig lives in a module that imports the whole generated client (its config.js
 * imports gen/index.js: about 1,900 modules, ~80 MB of resident memory in every process that loads it),
 * though KubeClient only asks it for the server, TLS material and credentials. This class is that part of KubeConfig,
 * built from client-node's own pieces, which import nothing of the generated client: the kubeconfig parser
 * (config_types.js: clusters, users and contexts with client-node's validation), the exec credential plugin (ExecAuth:
 * runs the plugin, caches its credential until expiry) and the token file (FileAuth: re-reads the file as it rotates,
 * which is how the in-cluster service-account token is read). What is written here is the glue of config.js: where the
 * kubeconfig is found (KUBECONFIG's list of files merged, ~/.kube/config, in-cluster), paths relative to the file, and
 * which option each field sets. A user of the auth providers client-node has modules for that need more (oidc, azure,
 * gcp) is handed to client-node's whole KubeConfig, loaded then: nothing is lost, only that case pays for it.
 * kube/runtime/kubeconfig.test.ts checks every kind of user against client-node's KubeConfig.
 */
/** What Kubeconfig.fromDefault reads from the environment, the conventional names: for docs/configuration.md. */
export const kubeconfigVariables = z.object({
  KUBECONFIG: z
    .string()
    .optional()
    .describe(
      "The kubeconfig files (separated as PATH is) to reach the cluster with; else ~/.kube/config, else in-cluster.",
    ),
  HOME: z.string().optional().describe("The home folder whose .kube/config is used when KUBECONFIG is not set."),
  KUBERNETES_SERVICE_HOST: z
    .string()
    .optional()
    .describe("The apiserver's address in a pod (set by Kubernetes): in-cluster access with the service account."),
  KUBERNETES_SERVICE_PORT: z.string().optional().describe("The apiserver's port in a pod (set by Kubernetes)."),
});

export class Kubeconfig implements KubeAccess {
  private clusters: Cluster[] = [];
  private users: User[] = [];
  private contexts: Context[] = [];
  private currentContext: string | undefined;
  private readonly exec = new ExecAuth();
  private readonly tokenFile = new FileAuth();
  private full: Promise<KubeAccess> | undefined;

  /** As KubeConfig.loadFromDefault: the files of $KUBECONFIG (merged), else ~/.kube/config, else in-cluster. */
  static fromDefault(): Kubeconfig {
    const config = new Kubeconfig();
    const files = (process.env.KUBECONFIG ?? "").split(delimiter).filter(Boolean);
    if (files.length > 0) {
      config.loadFile(files[0]!);
      for (const file of files.slice(1)) config.merge(Kubeconfig.fromFile(file));
      return config;
    }
    const home = process.env.HOME && readable(process.env.HOME) ? process.env.HOME : undefined;
    if (home && readable(join(home, ".kube", "config"))) return Kubeconfig.fromFile(join(home, ".kube", "config"));
    if (readable(SERVICE_ACCOUNT_TOKEN)) return Kubeconfig.inCluster();
    config.clusters = [{ name: "cluster", server: "http://localhost:8080", skipTLSVerify: false }];
    config.users = [{ name: "user" }];
    config.contexts = [{ name: "loaded-context", cluster: "cluster", user: "user" }];
    config.currentContext = "loaded-context";
    return config;
  }

  /** As KubeConfig.loadFromFile: certificate, key and CA files relative to the kubeconfig's directory. */
  static fromFile(file: string): Kubeconfig {
    const config = new Kubeconfig();
    config.loadFile(file);
    return config;
  }

  /** As KubeConfig.loadFromCluster: the pod's service account (its token file re-read as the kubelet rotates it). */
  static inCluster(pathPrefix = ""): Kubeconfig {
    const host = process.env.KUBERNETES_SERVICE_HOST;
    const port = process.env.KUBERNETES_SERVICE_PORT;
    const scheme = port === "80" || port === "8080" || port === "8001" ? "http" : "https";
    const server = `${scheme}://${host && isIPv6(host) ? `[${host}]` : host}:${port}`;
    const namespaceFile = `${pathPrefix}${SERVICE_ACCOUNT}/namespace`;
    const config = new Kubeconfig();
    config.clusters = [
      { name: "inCluster", caFile: `${pathPrefix}${SERVICE_ACCOUNT}/ca.crt`, server, skipTLSVerify: false },
    ];
    config.users = [
      {
        name: "inClusterUser",
        authProvider: { name: "tokenFile", config: { tokenFile: `${pathPrefix}${SERVICE_ACCOUNT_TOKEN}` } },
      },
    ];
    config.contexts = [
      {
        name: "inClusterContext",
        cluster: "inCluster",
        user: "inClusterUser",
        ...(existsSync(namespaceFile) ? { namespace: readFileSync(namespaceFile, "utf8") } : {}),
      },
    ];
    config.currentContext = "inClusterContext";
    return config;
  }

  getCurrentContext(): string | undefined {
    return this.currentContext;
  }

  getCurrentCluster(): Cluster | null {
    const context = this.currentContextObject();
    return context ? (this.clusters.find((c) => c.name === context.cluster) ?? null) : null;
  }

  getCurrentUser(): User | null {
    const context = this.currentContextObject();
    return context ? (this.users.find((u) => u.name === context.user) ?? null) : null;
  }

  /** The options KubeConfig.applyToHTTPSOptions sets for a request (its `agent` aside: KubeClient keeps its own). */
  async applyToHTTPSOptions(options: https.RequestOptions): Promise<void> {
    const user = this.getCurrentUser();
    const cluster = this.getCurrentCluster();
    if (user && NEEDS_CLIENT_NODE.has(user.authProvider?.name)) {
      this.full ??= this.clientNodeKubeConfig();
      return (await this.full).applyToHTTPSOptions(options);
    }
    if (cluster?.server.startsWith("http:") && !cluster.skipTLSVerify && !cluster.proxyUrl) {
      // KubeConfig refuses plain HTTP to a cluster not marked insecure-skip-tls-verify; so does this.
      throw new Error("HTTP protocol is not allowed when skipTLSVerify is not set or false");
    }
    if (!user) return;
    if (cluster?.skipTLSVerify) options.rejectUnauthorized = false;
    if (cluster?.tlsServerName) options.servername = cluster.tlsServerName;
    const ca = cluster ? fileOrData(cluster.caFile, cluster.caData) : null;
    if (ca) options.ca = ca;
    const cert = fileOrData(user.certFile, user.certData);
    if (cert) options.cert = cert;
    const key = fileOrData(user.keyFile, user.keyData);
    if (key) options.key = key;
    const headers = (options.headers ??= {}) as Record<string, string>;
    if (user.impersonateUser != null) headers["Impersonate-User"] = user.impersonateUser;
    if (this.exec.isAuthProvider(user)) await this.exec.applyAuthentication(user, options);
    else if (this.tokenFile.isAuthProvider(user)) await this.tokenFile.applyAuthentication(user, options);
    if (user.token) headers.Authorization = `Bearer ${user.token}`;
    if (user.username) options.auth = `${user.username}:${user.password}`;
  }

  private currentContextObject(): Context | undefined {
    return this.contexts.find((c) => c.name === this.currentContext);
  }

  private loadFile(file: string): void {
    const document = (load(readFileSync(file, "utf8")) ?? {}) as Record<string, unknown>;
    const root = dirname(file);
    const absolute = (path: string | undefined) => (path && !isAbsolute(path) ? join(root, path) : path);
    this.clusters = newClusters(document.clusters).map((c) => ({ ...c, caFile: absolute(c.caFile) }));
    this.users = newUsers(document.users).map((u) => ({
      ...u,
      certFile: absolute(u.certFile),
      keyFile: absolute(u.keyFile),
    }));
    this.contexts = newContexts(document.contexts);
    this.currentContext = document["current-context"] as string | undefined;
  }

  /** As KubeConfig.mergeConfig: a later file's current context wins; a name defined twice is an error. */
  private merge(other: Kubeconfig): void {
    if (other.currentContext) this.currentContext = other.currentContext;
    const add = <T extends { name: string }>(into: T[], items: T[], kind: string) => {
      for (const item of items) {
        if (into.some((i) => i.name === item.name)) throw new Error(`Duplicate ${kind}: ${item.name}`);
        into.push(item);
      }
    };
    add(this.clusters, other.clusters, "cluster");
    add(this.users, other.users, "user");
    add(this.contexts, other.contexts, "context");
  }

  private async clientNodeKubeConfig(): Promise<KubeAccess> {
    const { KubeConfig } = await import("@kubernetes/client-node");
    const config = new KubeConfig();
    config.loadFromOptions({
      clusters: this.clusters,
      users: this.users,
      contexts: this.contexts,
      currentContext: this.currentContext ?? "",
    });
    return config;
  }
}

const SERVICE_ACCOUNT = "/var/run/secrets/kubernetes.io/serviceaccount";
const SERVICE_ACCOUNT_TOKEN = `${SERVICE_ACCOUNT}/token`;

/** The auth providers client-node's KubeConfig has modules for that Kubeconfig hands to it. */
const NEEDS_CLIENT_NODE = new Set<unknown>(["oidc", "azure", "gcp"]);

function readable(path: string): boolean {
  try {
    accessSync(path);
    return true;
  } catch {
    return false;
  }
}

function fileOrData(file: string | undefined, data: string | undefined): Buffer | null {
  if (file) return readFileSync(file);
  if (data) return Buffer.from(data, "base64");
  return null;
}
