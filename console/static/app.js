// The console's shell: who is signed in, the header, and the page for the current #/ route.
import { api, setCsrf } from "./api.js";
import { CrewPage } from "./crew-page.js";
import { CrewsPage } from "./crews-page.js";
import { FlowPage } from "./flow-page.js";
import { FlowsPage } from "./flows-page.js";
import { html, render, useEffect, useState } from "./html.js";
import { NotFound } from "./not-found.js";
import { currentRoute } from "./route.js";
import { SignIn } from "./sign-in.js";
import { WaitingPage } from "./waiting-page.js";

function useRoute() {
  const [route, setRoute] = useState(currentRoute);
  useEffect(() => {
    const changed = () => setRoute(currentRoute());
    addEventListener("hashchange", changed);
    return () => removeEventListener("hashchange", changed);
  }, []);
  return route;
}

function Header({ session, onSignOut }) {
  return html`<header class="top">
    <a class="brand" href="#/">kubecrew console</a>
    <nav aria-label="Main">
      <a href="#/">Crews</a> <a href="#/flows">Flows</a> <a href="#/waiting">Waiting for you</a>
    </nav>
    ${
      session?.signed_in &&
      html`<div class="who">
        <span>${session.user.name}${session.user.admin ? " (org admin)" : ""}</span>
        <button type="button" onClick=${onSignOut}>Sign out</button>
      </div>`
    }
  </header>`;
}

function App() {
  const [session, setSession] = useState(undefined);
  const [problem, setProblem] = useState("");
  const route = useRoute();

  const load = () =>
    api("/console/session")
      .then((s) => {
        setCsrf(s.csrf);
        setSession(s);
      })
      .catch((err) => setProblem(err.message));
  useEffect(() => void load(), []);

  const signOut = async () => {
    await api("/console/sign-out", { method: "POST" });
    setCsrf("");
    setSession({ ...session, signed_in: false });
  };

  let page;
  if (problem) page = html`<p role="alert" class="error">${problem}</p>`;
  else if (!session) page = html`<p class="loading">Loading…</p>`;
  else if (!session.signed_in) page = html`<${SignIn} session=${session} onSignedIn=${load} />`;
  else if (route.page === "crew")
    page = html`<${CrewPage} ...${route} admin=${session.user.admin} traceUrl=${session.trace_url} />`;
  else if (route.page === "waiting") page = html`<${WaitingPage} />`;
  else if (route.page === "flows") page = html`<${FlowsPage} />`;
  else if (route.page === "flow") page = html`<${FlowPage} ...${route} />`;
  else if (route.page === "not-found") page = html`<${NotFound} hash=${route.hash} />`;
  else page = html`<${CrewsPage} />`;

  return html`<${Header} session=${session} onSignOut=${signOut} />
    <main>${page}</main>`;
}

const root = document.getElementById("app");
root.textContent = ""; // the loading line the page shows before this module runs
render(html`<${App} />`, root);
