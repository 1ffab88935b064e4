import { z } from "zod";

/** The console's lists, in the crew API's wire style (snake_case): crews with what they need, and a crew's runs. */

export const crewSummary = z
  .object({
    name: z.string(),
    description: z.string().optional(),
    inputs: z.array(
      z.object({
        name: z.string(),
        description: z.string().optional(),
        required: z.boolean().describe("False for a declared optional input or one with a default"),
      }),
    ),
    agents: z.array(z.object({ name: z.string(), role: z.string(), goal: z.string() })),
    tasks: z.array(
      z.object({
        name: z.string(),
        description: z.string(),
        expected_output: z.string(),
        agent: z
          .string()
          .optional()
          .describe("Absent for a hierarchical crew's task that leaves the choice to the manager"),
      }),
    ),
  })
  .meta({ id: "CrewSummary" });
export type CrewSummary = z.infer<typeof crewSummary>;

export const crewsResponse = z.object({ crews: z.array(crewSummary) }).meta({ id: "CrewsResponse" });

export const executionSummary = z
  .object({
    kickoff_id: z.uuid(),
    created: z.string().optional().describe("When the kickoff created it (ISO 8601)"),
    requested_by: z.object({ kind: z.enum(["org", "user"]), subject: z.string() }).optional(),
    status: z.enum(["running", "completed", "error"]),
    state: z.enum(["RUNNING", "SUCCESS", "FAILED"]),
    current_task: z.string().optional(),
    progress: z.object({ completed_tasks: z.number().int(), total_tasks: z.number().int() }),
    error: z.string().optional(),
    execution_time: z.number().optional().describe("Seconds, once finished"),
  })
  .meta({ id: "ExecutionSummary" });
export type ExecutionSummary = z.infer<typeof executionSummary>;

export const executionsResponse = z
  .object({ executions: z.array(executionSummary).describe("Newest first, at most 100") })
  .meta({ id: "ExecutionsResponse" });
