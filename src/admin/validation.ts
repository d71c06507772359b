import { ValidationPipe, type ValidationError } from "@nestjs/common";
import { AppError } from "../common/app-error.js";

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
  exceptionFactory: (errors) => {
    const details = fieldErrors(errors);
    return new AppError(
      400,
      "validation_failed",
      `Invalid input: ${Object.keys(details).join(", ")}.`,
      details,
    );
  },
});
