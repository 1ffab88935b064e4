import { sheets } from "@googleapis/sheets";
import { z } from "zod";
import { defineAction, type ActionContext } from "../app-action.ts";
import { google, googleOptions } from "./google-api.ts";

const api = (context: ActionContext) => sheets({ version: "v4", ...googleOptions(context) });

const spreadsheetId = z.string().min(1).max(256).describe("The spreadsheet id (from its URL)");
const range = z.string().min(1).max(512).describe("A1 range, e.g. Sheet1!A1:C10");
const values = z
  .array(z.array(z.union([z.string(), z.number(), z.boolean(), z.null()])))
  .min(1)
  .max(10_000)
  .describe("Rows of cell values; formulas start with =");

export const googleSheetsActions = {
  get_values: defineAction({
    description: "Reads the cell values of a range of a Google Sheets spreadsheet, as rows.",
    input: { spreadsheetId, range },
    async run(context, { spreadsheetId, range }) {
      const answer = await google(() => api(context).spreadsheets.values.get({ spreadsheetId, range }));
      return { range: answer.range, values: answer.values ?? [] };
    },
  }),
  append_values: defineAction({
    description:
      "Appends rows after the last row of a table in a Google Sheets range (values as a user would type them).",
    input: { spreadsheetId, range, values },
    async run(context, { spreadsheetId, range, values }) {
      const answer = await google(() =>
        api(context).spreadsheets.values.append({
          spreadsheetId,
          range,
          valueInputOption: "USER_ENTERED",
          insertDataOption: "INSERT_ROWS",
          requestBody: { values },
        }),
      );
      return { updatedRange: answer.updates?.updatedRange, updatedRows: answer.updates?.updatedRows };
    },
  }),
  update_values: defineAction({
    description: "Overwrites the cells of a Google Sheets range with rows of values (as a user would type them).",
    input: { spreadsheetId, range, values },
    async run(context, { spreadsheetId, range, values }) {
      const answer = await google(() =>
        api(context).spreadsheets.values.update({
          spreadsheetId,
          range,
          valueInputOption: "USER_ENTERED",
          requestBody: { values },
        }),
      );
      return { updatedRange: answer.updatedRange, updatedCells: answer.updatedCells };
    },
  }),
};
