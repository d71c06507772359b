// Request bodies of the OAuth routes (api.md "Connecting provider accounts"), and the start's answer. Unknown fields are rejected.
import { ApiProperty, ApiPropertyOptional } from "@nestjs/swagger";
import { Type } from "class-transformer";
import { IsIn, IsObject, IsString, IsUrl, IsUUID, Length, ValidateNested } from "class-validator";
import {
  accountIdShapes,
  InboundAuthBody,
  IsProviderAccountId,
  SettingsBody,
} from "../connections/connections.dto.js";
import { Optional } from "../common/validation.js";
import type { ConnectionSettings, InboundAuthConfig } from "../connections/lifecycle/connection.js";
import { OAUTH_PROVIDERS, type OAuthProvider } from "../connections/provider-oauth.js";

/** The connection a callback creates, as the attempt keeps it (no secret among them). */
export interface ConnectionFields {
  externalAccountId: string;
  displayName: string;
  /** The client it will belong to (absent in attempts started before clients: the tenant's first). */
  clientId?: string;
  inboundAuth: InboundAuthConfig;
  settings: ConnectionSettings;
}

export class ReconnectBody {
  @ApiPropertyOptional({
    description:
      "where the owner's browser goes after the consent; its origin must be on OAUTH_RETURN_URL_ORIGINS",
    example: "https://app.example.com/connections",
  })
  @Optional()
  @IsUrl({ protocols: ["http", "https"], require_protocol: true, require_tld: false })
  @Length(1, 2000)
  returnUrl?: string;
}

export class StartOAuthBody extends ReconnectBody {
  @ApiProperty({ enum: OAUTH_PROVIDERS })
  @IsIn(OAUTH_PROVIDERS)
  provider!: OAuthProvider;

  @ApiPropertyOptional({
    description: "required for operator keys; a tenant-admin key connects in its own tenant",
  })
  @Optional()
  @IsUUID()
  tenantId?: string;

  @ApiPropertyOptional({
    format: "uuid",
    description:
      "the client the connection will belong to (default: the tenant's first client; another tenant's: 404)",
  })
  @Optional()
  @IsUUID()
  clientId?: string;

  @ApiProperty({ description: `the account the grant must reach: ${accountIdShapes(OAUTH_PROVIDERS)}` })
  @IsString()
  @Length(1, 200)
  @IsProviderAccountId()
  externalAccountId!: string;

  @ApiProperty({ example: "Acme Roofing on Yelp" })
  @IsString()
  @Length(1, 200)
  displayName!: string;

  @ApiPropertyOptional({
    type: InboundAuthBody,
    description: "default: none for Yelp, basic for Thumbtack (apiKey is not available)",
  })
  @Optional()
  @IsObject()
  @ValidateNested()
  @Type(() => InboundAuthBody)
  inboundAuth?: InboundAuthBody;

  @ApiPropertyOptional({ type: SettingsBody })
  @Optional()
  @IsObject()
  @ValidateNested()
  @Type(() => SettingsBody)
  settings?: SettingsBody;
}

/** POST /admin/connections/oauth and /{id}/reconnect: where to send the owner's browser. */
export class OAuthStarted {
  @ApiProperty({ description: "the provider's consent page; the attempt is single-use" })
  authorizeUrl!: string;

  @ApiProperty({ description: "10 minutes after the start" })
  expiresAt!: Date;
}
