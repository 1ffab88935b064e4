// Every crew the signed-in user may use: what it does, its inputs, agents and tasks.
import { api, crewPath } from "./api.js";
import { html, useEffect, useState } from "./html.js";

function CrewCard({ crew }) {
  const link = `#${crewPath(crew.name)}`;
  return html`<article class="crew" aria-labelledby=${`crew-${crew.name}`}>
    <h2 id=${`crew-${crew.name}`}><a href=${link}>${crew.name}</a></h2>
    ${crew.description && html`<p>${crew.description}</p>`}
    <h3>Inputs</h3>
    <ul class="inputs">
      ${crew.inputs.map(
        (i) =>
          html`<li>
            <code>${i.name}</code>${i.description ? ` — ${i.description}` : ""}${i.required ? "" : " (optional)"}
          </li>`,
      )}
    </ul>
    <h3>Agents</h3>
    <ul>
      ${crew.agents.map((a) => html`<li><strong>${a.role}</strong>: ${a.goal}</li>`)}
    </ul>
    <h3>Tasks</h3>
    <ol>
      ${crew.tasks.map((t) => html`<li><strong>${t.name}</strong> (${t.agent}): ${t.description}</li>`)}
    </ol>
    <p class="actions">
      <a class="button" href=${`${link}/run`}>Run ${crew.name}</a>
      <a href=${`${link}/executions`}>Executions of ${crew.name}</a>
    </p>
  </article>`;
}

export function CrewsPage() {
  const [crews, setCrews] = useState(undefined);
  const [problem, setProblem] = useState("");
  useEffect(() => {
    api("/crews")
      .then((body) => setCrews(body.crews))
      .catch((err) => setProblem(err.message));
  }, []);
  return html`<section>
    <h1>Crews</h1>
    ${problem && html`<p role="alert" class="error">${problem}</p>`}
    ${crews && !crews.length && html`<p>No crews you may use.</p>`}
    ${crews?.map((crew) => html`<${CrewCard} key=${crew.name} crew=${crew} />`)}
  </section>`;
}
