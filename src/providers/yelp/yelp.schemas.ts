// The answers of Yelp's Leads API we read (providers.md §1, "Follow-up API"), as schemas checked at
// the client. Optional fields may be absent or null; a present one must have its type.
import "reflect-metadata"; // @Type reads decorator metadata, whoever loads this file first
import { Type } from "class-transformer";
import {
  IsArray,
  IsBoolean,
  IsNotEmpty,
  IsObject,
  IsOptional,
  IsString,
  ValidateNested,
} from "class-validator";
import type { JsonObject } from "../provider-event.js";

export class YelpUser {
  @IsOptional() @IsString() display_name?: string | null;
}

/** `GET /v3/leads/{lead_id}`. */
export class YelpLead {
  @IsString() @IsNotEmpty() id!: string;
  @IsOptional() @IsObject() @ValidateNested() @Type(() => YelpUser) user?: YelpUser | null;
  @IsOptional() @IsString() conversation_id?: string | null;
  @IsOptional() @IsString() temporary_email_address?: string | null;
  @IsOptional() @IsString() temporary_email_address_expiry?: string | null;
  @IsOptional() @IsString() phone_number?: string | null;
  @IsOptional() @IsString() temporary_phone_number?: string | null;
  @IsOptional() @IsString() time_created?: string | null;
  @IsOptional() @IsString() last_event_time?: string | null;
  /** Job names, survey answers, location, availability: kept as sent. */
  @IsOptional() @IsObject() project?: JsonObject | null;
}

export class YelpEventContent {
  @IsOptional() @IsString() text?: string | null;
  @IsOptional() @IsString() fallback_text?: string | null;
}

/** One event of a lead's conversation. */
export class YelpEvent {
  @IsString() @IsNotEmpty() id!: string;
  /** Where the event is in the list, for `older_than_cursor` / `newer_than_cursor`. */
  @IsString() @IsNotEmpty() cursor!: string;
  @IsOptional() @IsString() event_type?: string | null;
  /** `CONSUMER` or `BIZ`. */
  @IsOptional() @IsString() user_type?: string | null;
  /** `API-SELF`: we sent it. */
  @IsOptional() @IsString() channel?: string | null;
  @IsOptional() @IsString() user_display_name?: string | null;
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => YelpEventContent)
  event_content?: YelpEventContent | null;
  @IsOptional() @IsString() time_created?: string | null;
}

/** `GET /v3/leads/{lead_id}/events`. */
export class YelpEvents {
  @IsArray() @ValidateNested({ each: true }) @Type(() => YelpEvent) events!: YelpEvent[];
}

/** `GET /v3/businesses/{id}/lead_ids` ([ASSUMPTION] `{"lead_ids": [...], "has_more": bool}`). */
export class YelpLeadIds {
  @IsArray() lead_ids!: unknown[];
  @IsOptional() @IsBoolean() has_more?: boolean | null;
}

/**
 * `GET /v3/businesses/subscriptions` ([ASSUMPTION]: the subscribed businesses under `subscriptions`,
 * `businesses` or `data`, each with `business_id` and `subscription_types`). Items are read leniently.
 */
export class YelpSubscriptions {
  @IsOptional() @IsArray() subscriptions?: unknown[] | null;
  @IsOptional() @IsArray() businesses?: unknown[] | null;
  @IsOptional() @IsArray() data?: unknown[] | null;
}

/** `POST /v3/webhooks` ([DOCS Y3]): the self-serve webhook's id and when it expires (ISO 8601). */
export class YelpSelfServeWebhook {
  @IsString() @IsNotEmpty() webhook_id!: string;
  @IsString() @IsNotEmpty() expiration_date!: string;
}
