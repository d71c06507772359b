import { applyDecorators, ValidationPipe, type ValidationError } from "@nestjs/common";
import { Transform } from "class-transformer";
import { IsDate, Matches, MaxDate, MinDate, ValidateBy, ValidateIf } from "class-validator";
import { AppError } from "../common/app-error.js";
import { isMasked } from "./masked-url.js";

/** Flattens class-validator's tree into `{ "settings.crmDestination.url": ["must be a URL"] }`. */
export function fieldErrors(errors: ValidationError[], parent = ""): Record<string, string[]> {
  const fields: Record<string, string[]> = {};
  for (const error of errors) {
    const path = parent ? `${parent}.${error.property}` : error.property;
    if (error.constraints) fields[path] = Object.values(error.constraints);
    Object.assign(fields, fieldErrors(error.children ?? [], path));
  }
  return fields;
}

/**
 * Admin bodies and query strings: unknown fields are rejected, values are converted to the DTO's
 * types, and every failure is `400 validation_failed` with the field errors in `details`.
 */
export const adminValidationPipe = new ValidationPipe({
  whitelist: true,
  forbidNonWhitelisted: true,
  forbidUnknownValues: true,
  transform: true,
  validationError: { target: false, value: false },
  exceptionFactory: (errors) => validationFailed(fieldErrors(errors)),
});

/** `400 validation_failed` with the field errors in `details`, as the pipe answers (for checks beyond a DTO). */
export function validationFailed(details: Record<string, string[]>): AppError {
  return new AppError(
    400,
    "validation_failed",
    `Invalid input: ${Object.keys(details).join(", ")}.`,
    details,
  );
}

/**
 * An optional field: absent is fine, but a given value, `null` included, must pass the field's
 * other rules (class-validator's IsOptional would let `null` through to the database).
 */
export const Optional = () => ValidateIf((_object, value) => value !== undefined);

const EARLIEST = new Date("0001-01-01T00:00:00Z");
const LATEST = new Date("9999-12-31T23:59:59Z");

/** An ISO 8601 date-time string (nothing else: not a number, not a boolean), converted to a Date Postgres can store. */
export const DateTimeField = (name: string) =>
  applyDecorators(
    Transform(({ value }: { value: unknown }) =>
      typeof value === "string" && /^\d{4}-\d{2}-\d{2}(T|$)/.test(value) ? new Date(value) : value,
    ),
    IsDate({ message: `${name} must be an ISO 8601 date-time` }),
    MinDate(EARLIEST, { message: `${name} must be after year 0` }),
    MaxDate(LATEST, { message: `${name} must be before year 10000` }),
  );

/** Text from a query string or body that will be stored or compared in Postgres (which refuses NUL). */
export const NoNul = () => Matches(/^[^\0]*$/, { message: "$property must not contain NUL characters" });

/** A URL read from a view, its query string masked (`?…`), is no value to store. */
export const NotMasked = () =>
  ValidateBy({
    name: "notMasked",
    validator: {
      validate: (value: unknown) => typeof value !== "string" || !isMasked(value),
      defaultMessage: () =>
        "$property is a masked value shown in a view (its query string is …): send the full URL",
    },
  });

/** The fields a client sent (a DTO instance also holds the undeclared ones, as undefined). */
export function given<T extends object>(body: T): Partial<T> {
  return Object.fromEntries(Object.entries(body).filter(([, value]) => value !== undefined)) as Partial<T>;
}
