// "Waiting for you": every execution, across the crews, that waits for the signed-in person's answer — a task's
// answer to approve or send back with feedback, or a tool call the crew's toolPolicy.requireApproval held, to approve
// or deny — kept live by the executions' event streams (live-waits.js). The crew API shows a user only the executions
// they started, so no one sees another's wait; of the held calls it lists those the person may decide (mayDecide).
import { api, crewPath } from "./api.js";
import { shortId, when } from "./format.js";
import { html, useEffect, useState } from "./html.js";
import { useWaits } from "./live-waits.js";

/**
 * Whether the signed-in person may decide a held call, as POST /resume judges it (core/tool-approval.ts): a call that
 * acts with a user's connected account is that user's alone; any other call (an MCP tool, http_request) an org
 * admin's — not the user who started the run, who would be refused it.
 */
const mayDecide = (call, me) => (call.acts_as ? me.subject === call.acts_as : me.kind === "org");

/** Who is signed in ({kind, subject, admin}), as the console's session says. */
function useSignedIn() {
  const [me, setMe] = useState(undefined);
  const [problem, setProblem] = useState("");
  useEffect(() => {
    api("/console/session")
      .then((s) => setMe(s.user))
      .catch((err) => setProblem(err.message));
  }, []);
  return { me, problem };
}

/**
 * The note box and the two buttons every wait has: Approve, and the other verdict (a revision, or a denial), which
 * POST /resume with the note. `other.noteNeeded` is what to say when that verdict needs a note and has none.
 */
function Verdict({ item, label, noteLabel, rows, other, body, onAnswered }) {
  const [feedback, setFeedback] = useState("");
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState("");
  const answer = async (approve) => {
    if (!approve && other.noteNeeded && !feedback.trim()) {
      setProblem(other.noteNeeded);
      return;
    }
    setBusy(true);
    setProblem("");
    try {
      await api(crewPath(item.crew, "/resume"), {
        method: "POST",
        body: { execution_id: item.id, ...body, is_approve: approve, human_feedback: feedback },
      });
      onAnswered();
    } catch (err) {
      setProblem(err.message);
      setBusy(false);
    }
  };
  const noteId = `note-${item.id}-${body.tool_call_id ?? body.task_id}`;
  return html`<label for=${noteId}>${noteLabel}</label>
    <textarea
      id=${noteId}
      rows=${rows}
      value=${feedback}
      onInput=${(e) => setFeedback(e.currentTarget.value)}
    ></textarea>
    <p class="actions">
      <button type="button" disabled=${busy} onClick=${() => answer(true)} aria-label=${`Approve ${label}`}>
        Approve
      </button>
      <button type="button" disabled=${busy} onClick=${() => answer(false)} aria-label=${`${other.verb} ${label}`}>
        ${other.text}
      </button>
    </p>
    ${problem && html`<p role="alert" class="error">${problem}</p>`}`;
}

const executionLink = (item) =>
  html`<a href=${`#${crewPath(item.crew)}/executions/${item.id}`}>${item.crew} · ${shortId(item.id)}</a>`;

/** A held tool call: what it would do, and Approve / Deny (with a note the model is given on a denial). */
function HeldCallItem({ item, onAnswered }) {
  const { call } = item;
  const label = `${item.crew} ${shortId(item.id)} ${call.tool}`;
  return html`<li class="waiting-item held-call" data-kickoff-id=${item.id} data-tool-call-id=${call.tool_call_id}>
    <article aria-label=${`Tool call waiting: ${label}`}>
      <h2>${executionLink(item)} — task <code>${call.task_id}</code> wants to call <code>${call.tool}</code></h2>
      <p>
        Waiting since
        ${when(call.requested_at)}${item.by ? `, started by ${item.by}` : ""}${
          call.acts_as ? html`; it would act with the account of <strong>${call.acts_as}</strong>` : ""
        }.
      </p>
      <h3>Its arguments</h3>
      <pre class="arguments">${JSON.stringify(call.arguments, null, 2)}</pre>
      <${Verdict}
        item=${item}
        label=${label}
        noteLabel="Note (the agent is told it with a denial)"
        rows="2"
        other=${{ verb: "Deny", text: "Deny" }}
        body=${{ task_id: call.task_id, tool_call_id: call.tool_call_id }}
        onAnswered=${onAnswered}
      />
    </article>
  </li>`;
}

/** A task's answer: Approve / Ask for a revision (which needs feedback). */
function AnswerItem({ item, onAnswered }) {
  const label = `${item.crew} ${shortId(item.id)} ${item.pending.task_id}`;
  return html`<li class="waiting-item" data-kickoff-id=${item.id} data-task=${item.pending.task_id}>
    <article aria-label=${`Waiting: ${label}`}>
      <h2>${executionLink(item)} — task <code>${item.pending.task_id}</code></h2>
      <p>Waiting since ${when(item.pending.requested_at)}${item.by ? `, started by ${item.by}` : ""}.</p>
      <h3>The task's answer</h3>
      <pre class="output">${item.pending.output}</pre>
      <${Verdict}
        item=${item}
        label=${label}
        noteLabel="Feedback (a note with an approval; what to change for a revision)"
        rows="3"
        other=${{ verb: "Revise", text: "Ask for a revision", noteNeeded: "Say what to change before asking for a revision." }}
        body=${{ task_id: item.pending.task_id }}
        onAnswered=${onAnswered}
      />
    </article>
  </li>`;
}

export function WaitingPage() {
  const waits = useWaits();
  const signedIn = useSignedIn();
  const problem = waits.problem || signedIn.problem;
  const { me } = signedIn;
  const items = me && waits.items?.filter((item) => !item.call || mayDecide(item.call, me));
  const refresh = waits.refresh;
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
                onAnswered=${() => refresh(item.id)}
              />`
            : html`<${AnswerItem}
                key=${`${item.id}/${item.pending.task_id}/${item.pending.requested_at}`}
                item=${item}
                onAnswered=${() => refresh(item.id)}
              />`,
        )}
      </ul>`
    }
  </section>`;
}
