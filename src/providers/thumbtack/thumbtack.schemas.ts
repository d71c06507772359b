// The answers of Thumbtack's Partner API v4 we read (providers.md §2, "Follow-up API"), as schemas
// checked at the client. Optional fields may be absent or null; a present one must have its type.
import "reflect-metadata"; // @Type reads decorator metadata, whoever loads this file first
import { Type } from "class-transformer";
import { IsArray, IsOptional, IsString, ValidateBy, ValidateIf, ValidateNested } from "class-validator";

/** Thumbtack's int64 ids arrive as strings or as numbers. */
const IsId = () =>
  ValidateBy({
    name: "isId",
    validator: {
      validate: (value: unknown) =>
        (typeof value === "string" && value !== "") ||
        (typeof value === "number" && Number.isSafeInteger(value)),
      defaultMessage: () => "$property must be a non-empty string or an integer",
    },
  });

export class ThumbtackMessage {
  @IsOptional() @IsId() messageID?: string | number | null;
  /** `Customer` or `Business`. */
  @IsOptional() @IsString() from?: string | null;
  @IsOptional() @IsString() text?: string | null;
  @IsOptional() @IsString() sentAt?: string | null;
}

/** `GET /api/v4/negotiations/{negotiationID}/messages`: the list under `messages` (or `data`). */
export class ThumbtackMessages {
  /** Required unless the list comes as `data`. */
  @ValidateIf((answer: ThumbtackMessages) => answer.messages != null || answer.data == null)
  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => ThumbtackMessage)
  messages?: ThumbtackMessage[] | null;

  @IsOptional()
  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => ThumbtackMessage)
  data?: ThumbtackMessage[] | null;
}

/**
 * `GET /api/v4/businesses/{businessID}/webhooks` ([ASSUMPTION]: the list under `data` or `webhooks`).
 * Its items are read leniently (thumbtack.registration.ts): one not shaped like a webhook is not ours.
 */
export class ThumbtackWebhooks {
  @IsOptional() @IsArray() data?: unknown[] | null;
  @IsOptional() @IsArray() webhooks?: unknown[] | null;
}

/** `POST /api/v4/businesses/{businessID}/webhooks` ([DOCS T1]): the created webhook's `webhookID`. */
export class ThumbtackCreatedWebhook {
  @IsId() webhookID!: string | number;
}

/**
 * [ASSUMPTION] `GET /api/v4/businesses/{businessID}/negotiations` (THUMBTACK_NEGOTIATIONS_PATH): the
 * list under `negotiations` (or `data`), newest first, each item shaped like a `NegotiationCreatedV4`
 * webhook's `data`; items are normalized by the adapter (which checks them), not here.
 */
export class ThumbtackNegotiations {
  @IsOptional() @IsArray() negotiations?: unknown[] | null;
  @IsOptional() @IsArray() data?: unknown[] | null;
}
