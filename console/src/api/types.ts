// Names for the answer schemas the pages use, all generated from docs/openapi.json (schema.d.ts):
// a changed contract changes them, and the console's type check then fails the build.
import type { components } from "./schema";

type Schemas = components["schemas"];
export type Session = Schemas["SessionAnswer"];
export type Role = Schemas["UserView"]["role"];
export type Invitation = Schemas["Invitation"];
export type Connection = Schemas["ConnectionView"];
export type Client = Schemas["ClientView"];
export type ReplySettings = Schemas["ReplySettingsBody"];
export type AutoResponse = Schemas["AutoResponseBody"];
export type BusinessHours = Schemas["BusinessHoursView"];
export type SpeedReport = Schemas["SpeedToLeadReport"];
export type SummaryGroup = Schemas["JobsSummaryGroup"];
export type Receipt = Schemas["ReceiptView"];
export type Channel = Schemas["ChannelView"];
export type AuditEntry = Schemas["AuditEntryView"];
export type OAuthProvider = Schemas["StartOAuthBody"]["provider"];
