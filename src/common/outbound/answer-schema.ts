// The shape of an answer from an outside API, checked once at the client boundary: class-validator
// DTO classes are the schema. Past this point a processor reads typed fields, never a cast.
import { type ClassConstructor, plainToInstance } from "class-transformer";
import { validateSync, type ValidationError } from "class-validator";

export type AnswerCheck<T> = { ok: true; value: T } | { ok: false; problems: string[] };

/** Every failed constraint as "path: message" (the messages name fields, never values). */
function problemsOf(errors: ValidationError[], parent = ""): string[] {
  return errors.flatMap((error) => {
    const path = parent ? `${parent}.${error.property}` : error.property;
    return [
      ...Object.values(error.constraints ?? {}).map((message) => `${path}: ${message}`),
      ...problemsOf(error.children ?? [], path),
    ];
  });
}

/**
 * The parsed JSON `value` as an instance of `schema` when it passes the schema's rules (nested
 * classes through `@ValidateNested` + `@Type`); otherwise the problems found. The answer must be a
 * JSON object; fields the schema does not name are kept and not checked.
 */
export function checkAnswer<T extends object>(schema: ClassConstructor<T>, value: unknown): AnswerCheck<T> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return { ok: false, problems: ["the answer is not a JSON object"] };
  }
  const instance = plainToInstance(schema, value);
  const errors = validateSync(instance, {
    forbidUnknownValues: true,
    validationError: { target: false, value: false },
  });
  return errors.length === 0 ? { ok: true, value: instance } : { ok: false, problems: problemsOf(errors) };
}
