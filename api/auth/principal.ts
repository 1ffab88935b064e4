/** Who is calling the crew API, as resolved from a bearer token. */
export interface Principal {
  /** org: full operations on its crews; user: kickoff, and status of the executions it started. */
  kind: "org" | "user";
  /** Crews the token is valid for; "*" for every crew. */
  crews: string[] | "*";
  /** The user's subject for user tokens; the token's or client's id for org tokens. */
  subject: string;
  /**
   * For an org principal that is a person (an org admin signed in to the console): that person's user, whose
   * connected apps `/connections` shows. Org tokens and service accounts have none.
   */
  user?: string;
}

export function mayUseCrew(principal: Principal, crew: string): boolean {
  return principal.crews === "*" || principal.crews.includes(crew);
}
