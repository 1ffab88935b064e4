// A flow's method graph as an SVG picture: each method a box in the column of its longest path from a start method,
// an arrow from each method to the ones that listen to it (labelled with the router's or feedback's outcome), each
// box coloured by its state in the run shown, and the arrows the run took drawn heavier.
import { html } from "./html.js";

const BOX = { width: 168, height: 50 };
const GAP = { x: 70, y: 26 };
/** Room above the boxes for the arcs of arrows that pass a column. */
const TOP = 60;

/** Column and row of each method: columns by longest path from the starts, loops (back arrows) left out. */
export function layout(graph) {
  const names = graph.nodes.map((n) => n.name);
  const outgoing = new Map(names.map((n) => [n, []]));
  for (const edge of graph.edges) outgoing.get(edge.from)?.push(edge.to);
  // A depth-first walk from the start methods (then any left) finds the arrows that close a loop.
  const state = new Map();
  const order = [];
  const back = new Set();
  const visit = (name) => {
    state.set(name, "open");
    for (const next of outgoing.get(name) ?? []) {
      if (state.get(next) === "open") back.add(`${name}>${next}`);
      else if (!state.has(next)) visit(next);
    }
    state.set(name, "done");
    order.unshift(name);
  };
  for (const node of graph.nodes.filter((n) => n.start)) if (!state.has(node.name)) visit(node.name);
  for (const name of names) if (!state.has(name)) visit(name);
  const column = new Map(names.map((n) => [n, 0]));
  for (const name of order) {
    for (const next of outgoing.get(name) ?? []) {
      if (!back.has(`${name}>${next}`)) column.set(next, Math.max(column.get(next), column.get(name) + 1));
    }
  }
  const rows = new Map();
  const place = new Map();
  for (const name of names) {
    const c = column.get(name);
    const r = rows.get(c) ?? 0;
    rows.set(c, r + 1);
    place.set(name, { x: 10 + c * (BOX.width + GAP.x), y: TOP + r * (BOX.height + GAP.y) });
  }
  const width = 20 + (Math.max(...column.values()) + 1) * (BOX.width + GAP.x) - GAP.x;
  const height = TOP + 10 + Math.max(...rows.values()) * (BOX.height + GAP.y) - GAP.y;
  return { place, width, height };
}

function Arrow({ edge, from, to, taken }) {
  const [x1, y1] = [from.x + BOX.width, from.y + BOX.height / 2];
  const [x2, y2] = [to.x, to.y + BOX.height / 2];
  // To the next column or another row: a gentle S; along a row past a column: an arc over the boxes between; back
  // (a loop): under them.
  const skips = x2 - x1 > GAP.x + 1 && y1 === y2;
  const d =
    x2 <= x1
      ? `M${x1},${y1} C${x1 + 60},${y1 + 90} ${x2 - 60},${y2 + 90} ${x2},${y2}`
      : skips
        ? `M${x1},${y1} C${x1 + 40},${y1 - 70} ${x2 - 40},${y2 - 70} ${x2},${y2}`
        : `M${x1},${y1} C${x1 + GAP.x / 2},${y1} ${x2 - GAP.x / 2},${y2} ${x2},${y2}`;
  const label = [edge.outcome, edge.join].filter(Boolean).join(" · ");
  const mid = {
    x: (x1 + x2) / 2,
    y: x2 <= x1 ? Math.max(y1, y2) + 62 : skips ? Math.min(y1, y2) - 50 : (y1 + y2) / 2 - 6,
  };
  return html`<g
    class=${`edge${taken ? " taken" : ""}`}
    data-edge=${`${edge.from}>${edge.to}${edge.outcome ? `:${edge.outcome}` : ""}`}
  >
    <path d=${d} marker-end="url(#arrow)" />
    ${label && html`<text x=${mid.x} y=${mid.y} text-anchor="middle">${label}</text>`}
  </g>`;
}

function Box({ node, at, method }) {
  const phase = method?.phase ?? "pending";
  const kind = [node.call, node.router && "router", node.humanFeedback && "feedback", node.start && "start"]
    .filter(Boolean)
    .join(", ");
  const runs = method?.runs > 1 ? ` ×${method.runs}` : "";
  return html`<g class=${`method method-${phase}`} data-method=${node.name} data-phase=${phase}>
    <title>${`${node.name} (${kind}): ${phase}${method?.outcome ? ` → ${method.outcome}` : ""}`}</title>
    <rect x=${at.x} y=${at.y} width=${BOX.width} height=${BOX.height} rx="6" />
    <text x=${at.x + 10} y=${at.y + 20} class="name">${node.name}${runs}</text>
    <text x=${at.x + 10} y=${at.y + 38} class="kind">${phase === "pending" ? kind : phase}</text>
  </g>`;
}

/** `methods`: each method's state in the run shown ({phase, runs, outcome}); `outcomes`: the branches it took. */
export function FlowGraph({ graph, methods = {}, outcomes = [] }) {
  const { place, width, height } = layout(graph);
  const took = (edge) =>
    edge.outcome
      ? outcomes.some((o) => o.method === edge.from && o.outcome === edge.outcome)
      : methods[edge.from]?.phase === "succeeded" && methods[edge.to] !== undefined;
  return html`<svg
    class="flow-graph"
    role="img"
    aria-label="Method graph"
    viewBox=${`0 0 ${width} ${height + 70}`}
    width=${width}
    height=${height + 70}
  >
    <defs>
      <marker
        id="arrow"
        viewBox="0 0 10 10"
        refX="10"
        refY="5"
        markerUnits="userSpaceOnUse"
        markerWidth="9"
        markerHeight="9"
        orient="auto"
      >
        <path d="M0,0 L10,5 L0,10 z" />
      </marker>
    </defs>
    ${graph.edges.map(
      (edge) =>
        html`<${Arrow} edge=${edge} from=${place.get(edge.from)} to=${place.get(edge.to)} taken=${took(edge)} />`,
    )}
    ${graph.nodes.map((node) => html`<${Box} node=${node} at=${place.get(node.name)} method=${methods[node.name]} />`)}
  </svg>`;
}
