/** A message cut to `max` characters, ending in "..." when it was cut (Kubernetes condition and status messages). */
export function truncate(text: string, max = 1000): string {
  return text.length > max ? `${text.slice(0, max - 3)}...` : text;
}
