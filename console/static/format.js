// Small display helpers shared by the pages.
export const seconds = (s) => (typeof s === "number" ? `${s.toFixed(s < 10 ? 2 : 1)} s` : "");

export const when = (iso) => (iso ? new Date(iso).toLocaleString() : "");

export const shortId = (id) => id.slice(0, 8);

export function statusLabel(execution) {
  if (execution.status === "running") {
    const { completed_tasks, total_tasks } = execution.progress ?? {};
    return `running${execution.current_task ? ` ${execution.current_task}` : ""} (${completed_tasks}/${total_tasks})`;
  }
  return execution.status;
}
