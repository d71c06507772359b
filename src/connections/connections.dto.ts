// Connection request bodies (api.md "Connection bodies"). Unknown fields are rejected.
import { ApiProperty, ApiPropertyOptional } from "@nestjs/swagger";
import { Type } from "class-transformer";
import {
  IsBoolean,
  IsDefined,
  IsIn,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  IsUrl,
  IsUUID,
  Length,
  Max,
  Min,
  ValidateBy,
  ValidateNested,
} from "class-validator";
import { capabilities, isAccountId } from "../providers/capabilities.js";
import { INBOUND_AUTH_TYPES, type InboundAuthType } from "../providers/inbound-auth.js";
import { PROVIDERS, type Provider } from "../providers/provider-event.js";
import { ListQuery } from "../common/pagination.js";
import { DateTimeField, NotMasked, Optional } from "../common/validation.js";

const providerOf = (body: object): Provider | undefined => {
  const provider = (body as { provider?: unknown }).provider;
  return (PROVIDERS as readonly unknown[]).includes(provider) ? (provider as Provider) : undefined;
};

/**
 * `externalAccountId` has the shape of the body's provider's account ids (capability `accountId`):
 * it reaches provider URL paths. Without a valid provider, only that field's error is reported.
 */
export const IsProviderAccountId = () =>
  ValidateBy({
    name: "isProviderAccountId",
    validator: {
      validate: (value, args) => {
        const provider = providerOf(args?.object ?? {});
        return provider === undefined || isAccountId(provider, value);
      },
      defaultMessage: (args) => {
        const provider = providerOf(args?.object ?? {});
        return `externalAccountId must be ${provider ? capabilities(provider).accountId.shape : "an account id"}`;
      },
    },
  });

/** The account id shapes of `providers`, for the OpenAPI document (from the capabilities, so they agree). */
export const accountIdShapes = (providers: readonly Provider[]): string =>
  providers.map((provider) => capabilities(provider).accountId.shape).join("; ");

export class InboundAuthBody {
  @ApiProperty({ enum: INBOUND_AUTH_TYPES, description: "Leadgate generates every secret except apiKey" })
  @IsIn(INBOUND_AUTH_TYPES)
  type!: InboundAuthType;

  @ApiPropertyOptional({ description: "type header: the header's name", example: "X-Leadgate-Secret" })
  @Optional()
  @IsString()
  @Length(1, 64)
  headerName?: string;

  @ApiPropertyOptional({ description: "type apiKey: the Static Forms API key (write-only)" })
  @Optional()
  @IsString()
  @Length(8, 512)
  apiKey?: string;
}

export class CredentialsBody {
  @ApiProperty({ description: "provider API access token (write-only)" })
  @IsString()
  @Length(1, 4096)
  accessToken!: string;

  @ApiPropertyOptional({ description: "provider API refresh token (write-only)" })
  @Optional()
  @IsString()
  @Length(1, 4096)
  refreshToken?: string;
}

/** api.md "First replies": `text` and `afterHoursText` are templates, checked by reply-settings-check.ts. */
export class AutoResponseBody {
  @ApiProperty()
  @IsBoolean()
  enabled!: boolean;

  @ApiProperty({
    example:
      "Hi {{lead.firstName|there}}, thanks for asking {{business.name}} about {{lead.service|your project}}!",
    description: "a template (merge fields: api.md, First replies); Yelp and Thumbtack only",
  })
  @IsString()
  @Length(1, 2000)
  text!: string;

  @ApiPropertyOptional({ description: "a template used outside business hours (default: text)" })
  @Optional()
  @IsString()
  @Length(1, 2000)
  afterHoursText?: string;

  @ApiPropertyOptional({
    minimum: 0,
    maximum: 900,
    default: 0,
    description: "how long the reply waits for a person to answer first; less than responseTarget.seconds",
  })
  @Optional()
  @IsInt()
  @Min(0)
  @Max(900)
  delaySeconds?: number;
}

export class ResponseTargetBody {
  @ApiProperty({
    minimum: 1,
    maximum: 86_400,
    default: 300,
    description: "how fast the first response should be",
  })
  @IsInt()
  @Min(1)
  @Max(86_400)
  seconds!: number;
}

/** The reply settings a connection sets and a tenant's `defaults` hold (each `null`: inherit, PATCH). */
export class ReplySettingsBody {
  @ApiPropertyOptional({ type: AutoResponseBody, nullable: true, description: "null removes it (PATCH)" })
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => AutoResponseBody)
  autoResponse?: AutoResponseBody | null;

  @ApiPropertyOptional({
    nullable: true,
    description:
      '`{ timezone, weekly: { mon: [["08:00","18:00"]], …, sun: [] } }`: an IANA time zone, ranges per weekday (`[]`: closed); absent: always open; null removes it (PATCH)',
    example: {
      timezone: "America/New_York",
      weekly: {
        mon: [
          ["08:00", "12:00"],
          ["13:00", "18:00"],
        ],
        sun: [],
      },
    },
  })
  @IsOptional()
  @IsObject()
  businessHours?: object | null;

  @ApiPropertyOptional({ type: ResponseTargetBody, nullable: true, description: "null removes it (PATCH)" })
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => ResponseTargetBody)
  responseTarget?: ResponseTargetBody | null;
}

export class CrmDestinationBody {
  @ApiProperty({
    example: "https://crm.example.com/hooks/leadgate",
    description: "views show its query string masked (`?…`); a masked value is refused",
  })
  @IsUrl({ protocols: ["http", "https"], require_protocol: true, require_tld: false })
  @NotMasked()
  url!: string;
}

export class SettingsBody extends ReplySettingsBody {
  @ApiPropertyOptional({ type: CrmDestinationBody, nullable: true, description: "null removes it (PATCH)" })
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => CrmDestinationBody)
  crmDestination?: CrmDestinationBody | null;
}

export class CreateConnectionBody {
  @ApiPropertyOptional({
    description: "required for operator keys; a tenant-admin key creates in its own tenant",
  })
  @Optional()
  @IsUUID()
  tenantId?: string;

  @ApiPropertyOptional({
    format: "uuid",
    description: "the client it belongs to (default: the tenant's first client; another tenant's: 404)",
  })
  @Optional()
  @IsUUID()
  clientId?: string;

  @ApiProperty({ enum: PROVIDERS })
  @IsIn(PROVIDERS)
  provider!: Provider;

  @ApiProperty({ description: accountIdShapes(PROVIDERS) })
  @IsString()
  @Length(1, 200)
  @IsProviderAccountId()
  externalAccountId!: string;

  @ApiProperty({ example: "Acme Roofing on Yelp" })
  @IsString()
  @Length(1, 200)
  displayName!: string;

  @ApiProperty({ type: InboundAuthBody })
  @IsDefined()
  @IsObject()
  @ValidateNested()
  @Type(() => InboundAuthBody)
  inboundAuth!: InboundAuthBody;

  @ApiPropertyOptional({ type: CredentialsBody })
  @Optional()
  @IsObject()
  @ValidateNested()
  @Type(() => CredentialsBody)
  credentials?: CredentialsBody;

  @ApiPropertyOptional({ type: SettingsBody })
  @Optional()
  @IsObject()
  @ValidateNested()
  @Type(() => SettingsBody)
  settings?: SettingsBody;
}

export class UpdateConnectionBody {
  @ApiPropertyOptional()
  @Optional()
  @IsString()
  @Length(1, 200)
  displayName?: string;

  @ApiPropertyOptional({
    format: "uuid",
    description:
      "moves it to another client of its tenant (another tenant's: 404): it inherits that client's defaults",
  })
  @Optional()
  @IsUUID()
  clientId?: string;

  @ApiPropertyOptional({ type: CredentialsBody, description: "replaces the provider API credentials" })
  @Optional()
  @IsObject()
  @ValidateNested()
  @Type(() => CredentialsBody)
  credentials?: CredentialsBody;

  @ApiPropertyOptional({ type: SettingsBody, description: "each given setting replaces the stored one" })
  @Optional()
  @IsObject()
  @ValidateNested()
  @Type(() => SettingsBody)
  settings?: SettingsBody;
}

/** rotate-crm-secret; rotate-secret adds `apiKey`. */
export class RotateCrmSecretBody {
  @ApiPropertyOptional({
    minimum: 0,
    maximum: 2_592_000,
    default: 86_400,
    description: "how long the old secret keeps working (0: it stops at once)",
  })
  @Optional()
  @IsInt()
  @Min(0)
  @Max(2_592_000)
  graceSeconds?: number;
}

export class RotateSecretBody extends RotateCrmSecretBody {
  @ApiPropertyOptional({
    description: "type apiKey: the new Static Forms API key (Leadgate cannot generate it)",
  })
  @Optional()
  @IsString()
  @Length(8, 512)
  apiKey?: string;
}

/** POST /admin/connections/{id}/reply-preview. */
export class ReplyPreviewBody {
  @ApiPropertyOptional({ description: "a stored lead of this connection (default: a sample lead)" })
  @Optional()
  @IsUUID()
  leadId?: string;

  @ApiPropertyOptional({ description: "when the lead arrives (ISO 8601; default now)" })
  @Optional()
  @DateTimeField("at")
  at?: Date;

  @ApiPropertyOptional({
    type: AutoResponseBody,
    description: "an unsaved auto-response (default: the effective saved one)",
  })
  @Optional()
  @IsObject()
  @ValidateNested()
  @Type(() => AutoResponseBody)
  autoResponse?: AutoResponseBody;
}

export class ConnectionsQuery extends ListQuery {
  @ApiPropertyOptional({ enum: PROVIDERS })
  @Optional()
  @IsIn(PROVIDERS)
  provider?: Provider;

  @ApiPropertyOptional({ description: "operators: only this tenant's connections" })
  @Optional()
  @IsUUID()
  tenantId?: string;

  @ApiPropertyOptional({ format: "uuid", description: "only this client's connections" })
  @Optional()
  @IsUUID()
  clientId?: string;
}
