// The kickoff form, one field per input the crew needs; a kickoff opens the new execution.
import { api, crewPath } from "./api.js";
import { html, useState } from "./html.js";

export function RunTab({ crew }) {
  const [values, setValues] = useState({});
  const [problem, setProblem] = useState("");
  const [busy, setBusy] = useState(false);
  const submit = async (event) => {
    event.preventDefault();
    setBusy(true);
    setProblem("");
    const inputs = Object.fromEntries(Object.entries(values).filter(([, value]) => value !== ""));
    try {
      const { kickoff_id } = await api(crewPath(crew.name, "/kickoff"), { method: "POST", body: { inputs } });
      location.hash = `#${crewPath(crew.name)}/executions/${kickoff_id}`;
    } catch (err) {
      setProblem(err.message);
      setBusy(false);
    }
  };
  return html`<form class="run" onSubmit=${submit} aria-label=${`Run ${crew.name}`}>
    ${crew.inputs.map(
      (input) =>
        html`<div class="field">
          <label for=${`input-${input.name}`}>${input.name}${input.required ? "" : " (optional)"}</label>
          <input
            id=${`input-${input.name}`}
            name=${input.name}
            required=${input.required}
            aria-describedby=${input.description ? `input-${input.name}-help` : undefined}
            value=${values[input.name] ?? ""}
            onInput=${(e) => setValues({ ...values, [input.name]: e.currentTarget.value })}
          />
          ${input.description && html`<small id=${`input-${input.name}-help`}>${input.description}</small>`}
        </div>`,
    )}
    ${!crew.inputs.length && html`<p>This crew needs no inputs.</p>`}
    <button type="submit" disabled=${busy}>Kick off</button>
    ${problem && html`<p role="alert" class="error">${problem}</p>`}
  </form>`;
}
