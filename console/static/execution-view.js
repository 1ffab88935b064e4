// One execution, live: each task's state, steps (LLM turns and tool calls) and output from the crew API's event
// stream (Server-Sent Events), the final result or error, the tokens it used, a link to its trace when the operator
// set one (KUBECREW_TRACE_URL), and a Stop button while it runs.
import { api, crewPath } from "./api.js";
import { seconds, shortId } from "./format.js";
import { html, useEffect, useState } from "./html.js";
import { UsageTable } from "./usage-table.js";

const EVENTS = ["task_started", "step", "task_completed", "task_failed", "execution_completed", "execution_failed"];

function apply(state, name, data) {
  const tasks = { ...state.tasks };
  const task = { steps: [], ...tasks[data.task_id] };
  switch (name) {
    case "task_started":
      tasks[data.task_id] = { ...task, phase: "running", steps: [] };
      break;
    case "step":
      tasks[data.task_id] = { ...task, steps: [...task.steps, { attempt: data.attempt, ...data.step }] };
      break;
    case "task_completed": {
      // data.steps is the task's step count; the steps themselves came as step events.
      const { steps: stepCount, ...completed } = data;
      tasks[data.task_id] = { ...task, ...completed, phase: "completed", stepCount };
      break;
    }
    case "task_failed":
      tasks[data.task_id] = { ...task, phase: "failed", error: data.error };
      break;
    default:
      return { ...state, final: data };
  }
  return { ...state, tasks };
}

function Step({ step }) {
  const what =
    step.kind === "tool"
      ? `tool call ${step.tool}`
      : step.kind === "guardrail"
        ? `check ${step.error === undefined ? "passed" : "failed"}`
        : step.kind === "delegation"
          ? `delegated to ${step.coworker}`
          : step.kind === "decision"
            ? `${step.decision?.replace("_", " ") ?? "decided"} by ${step.decided_by?.subject}${step.tool ? ` (${step.tool})` : ""}`
            : "LLM turn";
  return html`<li class=${`step step-${step.kind}`}>
    <span>${what}${step.attempt > 1 ? ` (attempt ${step.attempt})` : ""}, ${step.duration_ms} ms</span>
    ${step.input !== undefined && html`<pre class="step-input">${JSON.stringify(step.input, null, 1)}</pre>`}
    ${step.output !== undefined && html`<pre class="step-output">${String(step.output)}</pre>`}
    ${step.error && html`<p class="error">${step.error}</p>`}
  </li>`;
}

function Task({ name, task }) {
  const phase = task?.phase ?? "pending";
  const time = task?.execution_time !== undefined ? `, ${seconds(task.execution_time)}` : "";
  return html`<li class=${`task task-${phase}`} data-task=${name}>
    <details open=${phase === "running" || phase === "failed"}>
      <summary>
        <strong>${name}</strong> — <span class="phase">${phase}</span>${time}
        ${task?.steps?.length ? ` · ${task.steps.length} step${task.steps.length === 1 ? "" : "s"}` : ""}
      </summary>
      ${task?.agent && html`<p>Agent: ${task.agent}</p>`}
      ${task?.error && html`<p role="alert" class="error">${task.error}</p>`}
      ${
        task?.output !== undefined &&
        html`<h4>Output</h4>
          <pre class="output">${task.output}</pre>`
      }
      ${
        task?.steps?.length > 0 &&
        html`<h4>Steps</h4>
          <ol class="steps">
            ${task.steps.map((s) => html`<${Step} step=${s} />`)}
          </ol>`
      }
    </details>
  </li>`;
}

/** The link to the execution's trace: the operator's template with the trace id in place of `{trace_id}`. */
function TraceLink({ template, traceId }) {
  if (!template || !traceId) return null;
  const href = template.replaceAll("{trace_id}", encodeURIComponent(traceId));
  return html`<p class="trace">
    Trace: <a class="trace-link" href=${href} target="_blank" rel="noopener noreferrer">${traceId}</a>
  </p>`;
}

export function ExecutionView({ crew, id, traceUrl }) {
  const [state, setState] = useState({ tasks: {}, final: undefined });
  const [problem, setProblem] = useState("");
  const [stopping, setStopping] = useState(false);
  const [report, setReport] = useState(undefined);
  const ended = Boolean(state.final);
  useEffect(() => {
    // /status names the trace (every shape, when tracing is on) and, once the execution ended, each task's usage;
    // the stream repeats neither. Asked when the page opens and again at the end.
    api(crewPath(crew.name, `/status/${encodeURIComponent(id)}`))
      .then(setReport)
      .catch(() => {});
  }, [crew.name, id, ended]);
  useEffect(() => {
    setState({ tasks: {}, final: undefined });
    const source = new EventSource(crewPath(crew.name, `/status/${encodeURIComponent(id)}/events`));
    for (const name of EVENTS) {
      source.addEventListener(name, (event) => {
        const data = JSON.parse(event.data);
        if (name.startsWith("execution_")) source.close();
        setState((s) => apply(s, name, data));
      });
    }
    source.onerror = () => {
      // The stream ends after the final event (closed above); an error before it is a refusal (404) or a lost
      // connection that EventSource retries by itself.
      if (source.readyState === EventSource.CLOSED) {
        api(crewPath(crew.name, `/status/${encodeURIComponent(id)}`)).catch((err) => setProblem(err.message));
      }
    };
    return () => source.close();
  }, [crew.name, id]);

  const stop = async () => {
    setStopping(true);
    try {
      await api(crewPath(crew.name, `/stop/${encodeURIComponent(id)}`), { method: "POST" });
    } catch (err) {
      setProblem(err.message);
      setStopping(false);
    }
  };

  const final = state.final;
  const status = final ? final.status : "running";
  const usedByTask = (report?.result?.tasks ?? []).filter((t) => t.usage).map((t) => [t.task_id, t.usage]);
  return html`<article class="execution" aria-labelledby="execution-title">
    <h2 id="execution-title">Execution ${shortId(id)}</h2>
    <p><a href=${`#${crewPath(crew.name)}/executions`}>All executions of ${crew.name}</a></p>
    <p class="status-line">
      Status:<strong class=${`status status-${status}`} data-status=${status} aria-live="polite">${status}</strong
      >${final && ` in ${seconds(final.execution_time)}`}
    </p>
    ${
      !final &&
      html`<button type="button" class="stop" onClick=${stop} disabled=${stopping}>
        ${stopping ? "Stopping…" : "Stop"}
      </button>`
    }
    <${TraceLink} template=${traceUrl} traceId=${report?.trace_id} />
    ${problem && html`<p role="alert" class="error">${problem}</p>`}
    ${final?.error && html`<p role="alert" class="error">${final.error}</p>`}
    <h3>Tasks</h3>
    <ol class="tasks">
      ${crew.tasks.map((t) => html`<${Task} name=${t.name} task=${state.tasks[t.name]} />`)}
    </ol>
    ${final && html`<${UsageTable} tasks=${usedByTask} total=${final.usage ?? report?.usage} />`}
    ${
      final?.output !== undefined &&
      html`<h3>Final output</h3>
        <pre class="output">${final.output}</pre>`
    }
  </article>`;
}
