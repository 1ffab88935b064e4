/**
 * Who waits for which execution to change: the event stream subscribes per client, a backend that learns of changes
 * (the Kubernetes backend's informers) notifies by execution id. One map, no timers.
 */
export class ExecutionChanges {
  private readonly listeners = new Map<string, Set<() => void>>();

  /** Calls `listener` after each change of execution `id` until the answer is called. */
  subscribe(id: string, listener: () => void): () => void {
    let set = this.listeners.get(id);
    if (!set) this.listeners.set(id, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.listeners.get(id) === set) this.listeners.delete(id);
    };
  }

  notify(id: string): void {
    for (const listener of this.listeners.get(id) ?? []) listener();
  }

  /** Executions with at least one listener. */
  get watched(): number {
    return this.listeners.size;
  }
}
