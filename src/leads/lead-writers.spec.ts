// Architecture test: the lead store is the only writer of the `leads` table: the upserts and consent
// of leads.repository.ts, and first-responses.ts, the one writer of a lead's first response. Any
// other file of src/ that inserts, updates or deletes a lead, in SQL or through Prisma's model API,
// fails this test with its path and line (the scan: src/common/table-writers.ts).
import { sourceFiles } from "../../test/support/source-files.js";
import { tableWrites, writersCheck } from "../common/table-writers.js";

const LEADS = { table: "leads", model: "lead" };

/** The lead store's files that write `leads`. */
const STORE = ["leads/leads.repository.ts", "leads/first-responses.ts"];

const leadWrites = (source: string) => tableWrites(source, LEADS);

describe("the lead store is the only writer of leads", () => {
  it("finds writes of leads, not of lead_messages or other tables", () => {
    expect(leadWrites("INSERT INTO leads AS l (tenant_id) VALUES ($1)")).toEqual([1]);
    expect(leadWrites("`UPDATE leads SET history_complete = true`")).toEqual([1]);
    expect(leadWrites("await tx.lead.upsert({ where })")).toEqual([1]);
    expect(leadWrites("data: { lead: { update: { status } } }")).toEqual([1]);
    expect(leadWrites("INSERT INTO lead_messages (lead_id) VALUES ($1)")).toEqual([]);
    expect(leadWrites("await tx.leadMessage.create({ data })")).toEqual([]);
    expect(leadWrites("SELECT l.id FROM leads l WHERE l.tenant_id = $1 FOR UPDATE")).toEqual([]);
    expect(leadWrites('type: "lead.updated"')).toEqual([]);
  });

  it("no file but the lead store's writes leads, and each of them does", () => {
    expect(writersCheck(sourceFiles(), LEADS, STORE)).toEqual({ outside: [], idle: [] });
  });
});
