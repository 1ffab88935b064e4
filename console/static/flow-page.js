// One flow: its method graph, a kickoff form, and a run of it live — each method's state from the run's event
// stream, the branches it took, a human_feedback's question with a form to answer it, the result or error.
import { api } from "./api.js";
import { FlowGraph } from "./flow-graph.js";
import { flowPath, loadFlows } from "./flows-page.js";
import { seconds, shortId } from "./format.js";
import { html, useEffect, useState } from "./html.js";

const EVENTS = ["method_started", "method_completed", "method_failed", "human_feedback_requested", "flow_finished"];

function apply(run, name, data) {
  const methods = { ...run.methods };
  const method = methods[data.method] ?? { runs: 0 };
  switch (name) {
    case "method_started":
      methods[data.method] = { ...method, phase: "running", runs: method.runs + 1 };
      return { ...run, methods };
    case "method_completed":
      methods[data.method] = { ...method, phase: "succeeded", outcome: data.outcome };
      return {
        ...run,
        methods,
        waiting: undefined,
        outcomes: data.outcome ? [...run.outcomes, { method: data.method, outcome: data.outcome }] : run.outcomes,
      };
    case "method_failed":
      methods[data.method] = { ...method, phase: "failed", error: data.error };
      return { ...run, methods };
    case "human_feedback_requested":
      methods[data.method] = { ...method, phase: "waiting" };
      return { ...run, methods, waiting: data };
    default:
      return { ...run, finished: data };
  }
}

/** A run's state as its event stream tells it; the final status once it has ended. */
function useFlowRun(flow, id) {
  const [run, setRun] = useState({ methods: {}, outcomes: [] });
  const [status, setStatus] = useState(undefined);
  const [problem, setProblem] = useState("");
  useEffect(() => {
    setRun({ methods: {}, outcomes: [] });
    setStatus(undefined);
    const path = flowPath(flow, `/status/${encodeURIComponent(id)}`);
    const source = new EventSource(`${path}/events`);
    for (const name of EVENTS) {
      source.addEventListener(name, (event) => {
        setRun((r) => apply(r, name, JSON.parse(event.data)));
        if (name === "flow_finished") {
          source.close();
          api(path).then(setStatus, (err) => setProblem(err.message));
        }
      });
    }
    source.onerror = () => {
      // Closed without its last event: a refusal (404) the status call names.
      if (source.readyState === EventSource.CLOSED) api(path).catch((err) => setProblem(err.message));
    };
    return () => source.close();
  }, [flow, id]);
  return { run, status, problem };
}

function Feedback({ flow, id, waiting }) {
  const [text, setText] = useState("");
  const [problem, setProblem] = useState("");
  const send = async (event) => {
    event.preventDefault();
    try {
      await api(flowPath(flow, "/resume"), {
        method: "POST",
        body: { execution_id: id, task_id: waiting.method, human_feedback: text },
      });
    } catch (err) {
      setProblem(err.message);
    }
  };
  return html`<form class="feedback" onSubmit=${send} aria-label=${`Feedback on ${waiting.method}`}>
    <h3>${waiting.method} waits for you: ${waiting.message}</h3>
    <pre class="output">${waiting.output}</pre>
    <label for="feedback">Your feedback${waiting.emit?.length ? ` (outcomes: ${waiting.emit.join(", ")})` : ""}</label>
    <textarea id="feedback" rows="3" value=${text} onInput=${(e) => setText(e.currentTarget.value)}></textarea>
    <button type="submit">Send feedback</button>
    ${problem && html`<p role="alert" class="error">${problem}</p>`}
  </form>`;
}

function FlowRun({ flow, id }) {
  const { run, status, problem } = useFlowRun(flow.name, id);
  const [stopProblem, setStopProblem] = useState("");
  const shown = status?.status ?? (run.finished ? "finishing" : run.waiting ? "waiting" : "running");
  const stop = () =>
    api(flowPath(flow.name, `/stop/${encodeURIComponent(id)}`), { method: "POST" }).catch((err) =>
      setStopProblem(err.message),
    );
  return html`<article class="execution" aria-labelledby="run-title">
    <h2 id="run-title">Run ${shortId(id)}</h2>
    <p class="status-line">
      Status:<strong class=${`status status-${shown}`} data-status=${shown} aria-live="polite">${shown}</strong
      >${status && ` in ${seconds(status.execution_time)}`}
    </p>
    ${!run.finished && html`<button type="button" class="stop" onClick=${stop}>Stop</button>`}
    ${(problem || stopProblem) && html`<p role="alert" class="error">${problem || stopProblem}</p>`}
    ${status?.error && html`<p role="alert" class="error">${status.error}</p>`}
    ${run.waiting && html`<${Feedback} flow=${flow.name} id=${id} waiting=${run.waiting} />`}
    <${FlowGraph} graph=${flow.graph} methods=${run.methods} outcomes=${run.outcomes} />
    ${
      run.outcomes.length > 0 &&
      html`<p class="outcomes">Branches taken: ${run.outcomes.map((o) => `${o.method} → ${o.outcome}`).join(", ")}</p>`
    }
    ${
      status?.result &&
      html`<h3>Result</h3>
        <pre class="output">${status.result.output}</pre>`
    }
    <p><a href=${`#${flowPath(flow.name)}`}>Run ${flow.name} again</a></p>
  </article>`;
}

/** Text fields for the state's inputs; a value written as a JSON list or object is sent as one. */
function Kickoff({ flow }) {
  const [values, setValues] = useState({});
  const [problem, setProblem] = useState("");
  const submit = async (event) => {
    event.preventDefault();
    setProblem("");
    const inputs = Object.fromEntries(
      Object.entries(values)
        .filter(([, v]) => v !== "")
        .map(([k, v]) => [k, /^\s*[[{]/.test(v) ? JSON.parse(v) : v]),
    );
    try {
      const { kickoff_id } = await api(flowPath(flow.name, "/kickoff"), { method: "POST", body: { inputs } });
      location.hash = `#${flowPath(flow.name)}/${kickoff_id}`;
    } catch (err) {
      setProblem(err.message);
    }
  };
  return html`<form class="run" onSubmit=${submit} aria-label=${`Run ${flow.name}`}>
    ${flow.inputs.map(
      (name) =>
        html`<div class="field">
          <label for=${`input-${name}`}>${name}</label>
          <input
            id=${`input-${name}`}
            value=${values[name] ?? ""}
            onInput=${(e) => setValues({ ...values, [name]: e.currentTarget.value })}
          />
        </div>`,
    )}
    <button type="submit">Kick off</button>
    ${problem && html`<p role="alert" class="error">${problem}</p>`}
  </form>`;
}

export function FlowPage({ flow: name, run }) {
  const [flow, setFlow] = useState(undefined);
  const [problem, setProblem] = useState("");
  useEffect(() => {
    loadFlows()
      .then((flows) => {
        const found = flows.find((f) => f.name === name);
        if (found) setFlow(found);
        else setProblem(`No flow named "${name}" that you may use.`);
      })
      .catch((err) => setProblem(err.message));
  }, [name]);
  if (problem) return html`<p role="alert" class="error">${problem}</p>`;
  if (!flow) return html`<p class="loading">Loading…</p>`;
  return html`<section>
    <h1>${flow.name}</h1>
    ${flow.description && html`<p>${flow.description}</p>`}
    ${
      run
        ? html`<${FlowRun} key=${run} flow=${flow} id=${run} />`
        : html`<${Kickoff} flow=${flow} /><${FlowGraph} graph=${flow.graph} />`
    }
  </section>`;
}
