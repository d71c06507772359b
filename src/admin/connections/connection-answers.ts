// The answers of the connection routes that wrap a connection view (connections.controller.ts).
import { ApiProperty } from "@nestjs/swagger";
import { type ConnectionWarning, ConnectionView } from "./connection-view.js";

/** A secret shown this once: `bearerToken`, `username`/`password`, `headerValue`, `token`, `crmSigningSecret`. */
const SHOWN_ONCE = {
  type: "object",
  additionalProperties: { type: "string" },
  description: "shown this once, never again",
} as const;

/** `{ connection }`: pause, revoke-previous-secret. */
export class ConnectionAnswer {
  @ApiProperty({ type: () => ConnectionView })
  connection!: ConnectionView;
}

export class ResumedConnection extends ConnectionAnswer {
  @ApiProperty({ description: "held and blocked jobs queued again" })
  requeuedJobs!: number;
}

export class UpdatedConnection extends ConnectionAnswer {
  @ApiProperty({ ...SHOWN_ONCE, description: "a new CRM signing secret, once, if one was created" })
  secrets!: Record<string, string>;
}

export class CreatedConnection extends UpdatedConnection {
  @ApiProperty({ description: "the webhook URL with its secret (a `token` connection's)" })
  webhookUrl!: string;

  @ApiProperty({ enum: ["apiKey_only"], isArray: true })
  warnings!: ConnectionWarning[];
}

export class CrmSecret {
  @ApiProperty({ description: "the new `whsec_` signing secret, shown this once" })
  crmSigningSecret!: string;
}

export class RotatedCrmSecret {
  @ApiProperty({ type: () => CrmSecret })
  secrets!: CrmSecret;
}

export class RotatedSecrets {
  @ApiProperty(SHOWN_ONCE)
  secrets!: Record<string, string>;

  @ApiProperty({ description: "the webhook URL with the new secret" })
  webhookUrl!: string;
}
