/**
 * What an import found: problems (the crew is not imported; each says what to do instead) and notes (the crew is
 * imported; each says what kubecrew does differently). Each is one line that starts with the file and the field.
 */
export class Findings {
  readonly problems: string[] = [];
  readonly notes: string[] = [];

  problem(at: string, message: string): void {
    this.problems.push(`${at}: ${message}`);
  }

  note(at: string, message: string): void {
    this.notes.push(`${at}: ${message}`);
  }
}

/** Where a part of a definition was read: its file, and the path to the part inside it ("" for the whole file). */
export interface Origin {
  file: string;
  path: string;
}

/** `file: path.field`, as the lines name a field. */
export function fieldAt(origin: Origin, field?: string | number): string {
  const inner =
    field === undefined
      ? origin.path
      : typeof field === "number"
        ? `${origin.path}[${field}]`
        : origin.path
          ? `${origin.path}.${field}`
          : field;
  return inner ? `${origin.file}: ${inner}` : origin.file;
}

/** The origin of a part of a part (`tasks[1]`, `agents.writer`). */
export function inside(origin: Origin, field: string | number): Origin {
  const path = typeof field === "number" ? `${origin.path}[${field}]` : origin.path ? `${origin.path}.${field}` : field;
  return { file: origin.file, path };
}
