// "Waiting for you": every execution, across the crews, that waits for the signed-in person's answer — a task's
// answer to approve or send back with feedback, or a tool call the crew's toolPolicy.requireApproval held, to approve
// or deny. Read again every two seconds while shown (as the executions tab is); the crew API shows a user only the
// executions they started, so no one sees another's wait.
import { api, crewPath } from "./api.js";
import { shortId, when } from "./format.js";
import { html, useEffect, useState } from "./html.js";

const POLL_MS = 2000;

/** The waits the signed-in person may answer: the running executions of every crew whose status has one. */
async function loadWaiting() {
  const { crews } = await api("/crews");
  const lists = await Promise.all(
    crews.map((crew) =>
      api(crewPath(crew.name, "/executions")).then(({ executions }) =>
        executions.filter((e) => e.status === "running").map((e) => ({ crew: crew.name, id: e.kickoff_id, e })),
      ),
    ),
  );
  const statuses = await Promise.all(
    lists.flat().map(({ crew, id, e }) =>
      api(crewPath(crew, `/status/${encodeURIComponent(id)}`))
        .then((status) => [
          ...(status.pending_human_input
            ? [{ crew, id, by: e.requested_by?.subject, pending: status.pending_human_input }]
            : []),
          ...(status.pending_tool_calls ?? []).map((call) => ({ crew, id, by: e.requested_by?.subject, call })),
        ])
        .catch(() => []),
    ),
  );
  return statuses.flat();
}

/** A held tool call: what it would do, and Approve / Deny (with a note the model is given on a denial). */
function HeldCallItem({ item, onAnswered }) {
  const { call } = item;
  const [feedback, setFeedback] = useState("");
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState("");
  const label = `${item.crew} ${shortId(item.id)} ${call.tool}`;
  const answer = async (approve) => {
    setBusy(true);
    setProblem("");
    try {
      await api(crewPath(item.crew, "/resume"), {
        method: "POST",
        body: {
          execution_id: item.id,
          task_id: call.task_id,
          tool_call_id: call.tool_call_id,
          is_approve: approve,
          human_feedback: feedback,
        },
      });
      onAnswered();
    } catch (err) {
      setProblem(err.message);
      setBusy(false);
    }
  };
  const feedbackId = `note-${item.id}-${call.tool_call_id}`;
  return html`<li class="waiting-item held-call" data-kickoff-id=${item.id} data-tool-call-id=${call.tool_call_id}>
    <article aria-label=${`Tool call waiting: ${label}`}>
      <h2>
        <a href=${`#${crewPath(item.crew)}/executions/${item.id}`}>${item.crew} · ${shortId(item.id)}</a>
        — task <code>${call.task_id}</code> wants to call <code>${call.tool}</code>
      </h2>
      <p>
        Waiting since
        ${when(call.requested_at)}${item.by ? `, started by ${item.by}` : ""}${
          call.acts_as ? html`; it would act with the account of <strong>${call.acts_as}</strong>` : ""
        }.
      </p>
      <h3>Its arguments</h3>
      <pre class="arguments">${JSON.stringify(call.arguments, null, 2)}</pre>
      <label for=${feedbackId}>Note (the agent is told it with a denial)</label>
      <textarea
        id=${feedbackId}
        rows="2"
        value=${feedback}
        onInput=${(e) => setFeedback(e.currentTarget.value)}
      ></textarea>
      <p class="actions">
        <button type="button" disabled=${busy} onClick=${() => answer(true)} aria-label=${`Approve ${label}`}>
          Approve
        </button>
        <button type="button" disabled=${busy} onClick=${() => answer(false)} aria-label=${`Deny ${label}`}>
          Deny
        </button>
      </p>
      ${problem && html`<p role="alert" class="error">${problem}</p>`}
    </article>
  </li>`;
}

function WaitingItem({ item, onAnswered }) {
  const [feedback, setFeedback] = useState("");
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState("");
  const label = `${item.crew} ${shortId(item.id)} ${item.pending.task_id}`;
  const answer = async (approve) => {
    if (!approve && !feedback.trim()) {
      setProblem("Say what to change before asking for a revision.");
      return;
    }
    setBusy(true);
    setProblem("");
    try {
      await api(crewPath(item.crew, "/resume"), {
        method: "POST",
        body: {
          execution_id: item.id,
          task_id: item.pending.task_id,
          is_approve: approve,
          human_feedback: feedback,
        },
      });
      onAnswered();
    } catch (err) {
      setProblem(err.message);
      setBusy(false);
    }
  };
  const feedbackId = `feedback-${item.id}-${item.pending.task_id}`;
  return html`<li class="waiting-item" data-kickoff-id=${item.id} data-task=${item.pending.task_id}>
    <article aria-label=${`Waiting: ${label}`}>
      <h2>
        <a href=${`#${crewPath(item.crew)}/executions/${item.id}`}>${item.crew} · ${shortId(item.id)}</a>
        — task <code>${item.pending.task_id}</code>
      </h2>
      <p>Waiting since ${when(item.pending.requested_at)}${item.by ? `, started by ${item.by}` : ""}.</p>
      <h3>The task's answer</h3>
      <pre class="output">${item.pending.output}</pre>
      <label for=${feedbackId}>Feedback (a note with an approval; what to change for a revision)</label>
      <textarea
        id=${feedbackId}
        rows="3"
        value=${feedback}
        onInput=${(e) => setFeedback(e.currentTarget.value)}
      ></textarea>
      <p class="actions">
        <button type="button" disabled=${busy} onClick=${() => answer(true)} aria-label=${`Approve ${label}`}>
          Approve
        </button>
        <button type="button" disabled=${busy} onClick=${() => answer(false)} aria-label=${`Revise ${label}`}>
          Ask for a revision
        </button>
      </p>
      ${problem && html`<p role="alert" class="error">${problem}</p>`}
    </article>
  </li>`;
}

export function WaitingPage() {
  const [items, setItems] = useState(undefined);
  const [problem, setProblem] = useState("");
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let stopped = false;
    const load = () =>
      loadWaiting()
        .then((found) => {
          if (stopped) return;
          setProblem("");
          setItems(found);
        })
        .catch((err) => !stopped && setProblem(err.message));
    load();
    const timer = setInterval(load, POLL_MS);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, [tick]);
  return html`<section aria-labelledby="waiting-title">
    <h1 id="waiting-title">Waiting for you</h1>
    ${problem && html`<p role="alert" class="error">${problem}</p>`}
    ${!items && !problem && html`<p class="loading">Loading…</p>`}
    ${items && !items.length && html`<p class="nothing-waiting" aria-live="polite">Nothing waits for you.</p>`}
    ${
      items?.length > 0 &&
      html`<ul class="waiting" aria-live="polite">
        ${items.map((item) =>
          item.call
            ? html`<${HeldCallItem}
                key=${`${item.id}/call/${item.call.tool_call_id}`}
                item=${item}
                onAnswered=${() => setTick((t) => t + 1)}
              />`
            : html`<${WaitingItem}
                key=${`${item.id}/${item.pending.task_id}/${item.pending.requested_at}`}
                item=${item}
                onAnswered=${() => setTick((t) => t + 1)}
              />`,
        )}
      </ul>`
    }
  </section>`;
}
