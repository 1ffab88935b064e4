// The crew's executions with their live status and progress (read again every second while shown).
import { api, crewPath } from "./api.js";
import { shortId, statusLabel, when } from "./format.js";
import { html, useEffect, useState } from "./html.js";

export function ExecutionsTab({ crew }) {
  const [executions, setExecutions] = useState(undefined);
  const [problem, setProblem] = useState("");
  useEffect(() => {
    let stopped = false;
    const load = () =>
      api(crewPath(crew.name, "/executions"))
        .then((body) => !stopped && setExecutions(body.executions))
        .catch((err) => !stopped && setProblem(err.message));
    load();
    const timer = setInterval(load, 1000);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, [crew.name]);
  if (problem) return html`<p role="alert" class="error">${problem}</p>`;
  if (!executions) return html`<p class="loading">Loading…</p>`;
  if (!executions.length) return html`<p>No executions yet.</p>`;
  return html`<table class="executions">
    <caption>
      Executions of ${crew.name}, newest first
    </caption>
    <thead>
      <tr>
        <th scope="col">Kickoff</th>
        <th scope="col">Status</th>
        <th scope="col">Progress</th>
        <th scope="col">Started</th>
        <th scope="col">By</th>
      </tr>
    </thead>
    <tbody>
      ${executions.map(
        (e) =>
          html`<tr key=${e.kickoff_id} data-kickoff-id=${e.kickoff_id}>
            <td><a href=${`#${crewPath(crew.name)}/executions/${e.kickoff_id}`}>${shortId(e.kickoff_id)}</a></td>
            <td class=${`status status-${e.status}`}>${statusLabel(e)}</td>
            <td>
              <progress
                max=${e.progress.total_tasks}
                value=${e.progress.completed_tasks}
                aria-label=${`${e.progress.completed_tasks} of ${e.progress.total_tasks} tasks`}
              ></progress>
            </td>
            <td>${when(e.created)}</td>
            <td>${e.requested_by?.subject ?? ""}</td>
          </tr>`,
      )}
    </tbody>
  </table>`;
}
