import type { Condition } from "./crew.ts";

/** Sets a condition, keeping lastTransitionTime when the status does not change (as metav1 conditions do). */
export function setCondition(
  conditions: Condition[] | undefined,
  next: Omit<Condition, "lastTransitionTime">,
  now: string,
): Condition[] {
  const others = (conditions ?? []).filter((c) => c.type !== next.type);
  const previous = conditions?.find((c) => c.type === next.type);
  const lastTransitionTime = previous && previous.status === next.status ? previous.lastTransitionTime : now;
  return [...others, { ...next, lastTransitionTime }];
}
