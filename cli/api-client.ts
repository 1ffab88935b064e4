import type { z } from "zod";
import {
  errorBody,
  kickoffResponse,
  resumeResponse,
  statusResponse,
  stopResponse,
  type ErrorBody,
  type KickoffRequest,
  type ResumeRequest,
} from "../core/api-bodies.ts";
import { createOutboundClient, type OutboundClient } from "../platform/outbound/outbound-fetch.ts";
import { localPolicy, OutboundRefusedError } from "../core/outbound/policy.ts";
import { crewsResponse, executionsResponse } from "../api/routes/listing-bodies.ts";
import type { ApiTarget } from "./api-target.ts";
import { CommandFailure } from "./command-failure.ts";
import { oneLine } from "./terminal.ts";

/** How long a request may take before the command gives up (the event stream has no limit). */
const REQUEST_TIMEOUT_MS = 30_000;

/** The API answered with an error: its status and its documented error body, when it sent one. */
export class ApiFailure extends CommandFailure {
  readonly status: number;
  readonly body: ErrorBody | undefined;

  constructor(message: string, status: number, body: ErrorBody | undefined) {
    super(message);
    this.status = status;
    this.body = body;
  }
}

/** The API could not be reached (refused, unresolvable, timed out, reset): the reader of a stream tries again. */
export class ApiUnreachable extends CommandFailure {}

/**
 * The crew API as the CLI uses it: each answer checked against the API's zod schema and returned as it came (the
 * `--output json|yaml` bodies are the API's own). A crew of `undefined` is the default crew at the root paths.
 * Calls go through the outbound URL policy of a user's machine (loopback and private addresses allowed: the API is
 * often there; cloud metadata refused), with the DNS answer pinned.
 */
export class CrewApiClient {
  readonly url: string;
  private readonly token: string;
  private readonly outbound: OutboundClient;

  constructor(target: ApiTarget) {
    this.url = target.url;
    this.token = target.token;
    this.outbound = createOutboundClient(localPolicy);
  }

  crews() {
    return this.call("GET", "/crews", crewsResponse);
  }

  kickoff(crew: string | undefined, body: Pick<KickoffRequest, "inputs">) {
    return this.call("POST", crewPath(crew, "/kickoff"), kickoffResponse, body);
  }

  status(crew: string | undefined, id: string) {
    return this.call("GET", crewPath(crew, `/status/${encodeURIComponent(id)}`), statusResponse);
  }

  executions(crew: string | undefined) {
    return this.call("GET", crewPath(crew, "/executions"), executionsResponse);
  }

  stop(crew: string | undefined, id: string) {
    return this.call("POST", crewPath(crew, `/stop/${encodeURIComponent(id)}`), stopResponse);
  }

  /** A person's answer to the answer a humanInput task waits with (AMP's POST /resume). */
  resume(crew: string | undefined, body: ResumeRequest) {
    return this.call("POST", crewPath(crew, "/resume"), resumeResponse, body);
  }

  /** The execution's event stream from the event after `lastEventId`: the response, its status checked. */
  async openEvents(
    crew: string | undefined,
    id: string,
    lastEventId: string | undefined,
    signal: AbortSignal,
  ): Promise<Response> {
    const path = crewPath(crew, `/status/${encodeURIComponent(id)}/events`);
    const res = await this.send("GET", path, {
      signal,
      headers: { accept: "text/event-stream", ...(lastEventId ? { "last-event-id": lastEventId } : {}) },
    });
    if (!res.ok) throw await this.failure(res);
    return res;
  }

  close(): Promise<void> {
    return this.outbound.close();
  }

  private async call<S extends z.ZodType>(method: string, path: string, schema: S, body?: unknown) {
    const res = await this.send(method, path, {
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      ...(body !== undefined
        ? { headers: { "content-type": "application/json" }, body: JSON.stringify(body) }
        : { headers: {} }),
    });
    if (!res.ok) throw await this.failure(res);
    const json = await readJson(res);
    const parsed = schema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new CommandFailure(
        `unexpected answer from ${this.url}${path}: ${issue.path.join(".") || "(body)"}: ${issue.message}`,
      );
    }
    return json as z.infer<S>;
  }

  private async send(
    method: string,
    path: string,
    init: { signal: AbortSignal; headers: Record<string, string>; body?: string },
  ): Promise<Response> {
    try {
      return await this.outbound.fetch(`${this.url}${path}`, {
        method,
        signal: init.signal,
        headers: { ...init.headers, authorization: `Bearer ${this.token}` },
        ...(init.body !== undefined ? { body: init.body } : {}),
      });
    } catch (err) {
      if (init.signal.aborted && (init.signal.reason as Error | undefined)?.name !== "TimeoutError") throw err;
      throw this.unreachable(err);
    }
  }

  private unreachable(err: unknown): CommandFailure {
    if ((err as Error).name === "TimeoutError") {
      return new ApiUnreachable(`${this.url} did not answer within ${REQUEST_TIMEOUT_MS / 1000} s`);
    }
    const cause = ((err as { cause?: unknown }).cause ?? err) as NodeJS.ErrnoException;
    if (cause instanceof OutboundRefusedError)
      return new CommandFailure(`refused to call ${this.url}: ${cause.message}`);
    const why: Record<string, string> = {
      ECONNREFUSED: "connection refused",
      ENOTFOUND: "no such host",
      EAI_AGAIN: "its host name could not be resolved",
      ECONNRESET: "the connection was reset",
      UND_ERR_CONNECT_TIMEOUT: "the connection timed out",
    };
    return new ApiUnreachable(`cannot reach ${this.url}: ${why[cause.code ?? ""] ?? oneLine(cause.message)}`);
  }

  private async failure(res: Response): Promise<ApiFailure> {
    const parsed = errorBody.safeParse(await readJson(res).catch(() => undefined));
    const body = parsed.success ? parsed.data : undefined;
    if (res.status === 401) {
      return new ApiFailure(
        `the token was refused by ${this.url} (401): it is wrong, expired or revoked, or not valid for this crew`,
        401,
        body,
      );
    }
    const what = body ? oneLine(body.message) : `${this.url} answered ${res.status} ${oneLine(res.statusText)}`;
    return new ApiFailure(`${what} (${res.status})`, res.status, body);
  }
}

const crewPath = (crew: string | undefined, rest: string) =>
  crew === undefined ? rest : `/crews/${encodeURIComponent(crew)}${rest}`;

async function readJson(res: Response): Promise<unknown> {
  const text = await res.text();
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}
