import { type PipeTransform, Injectable } from "@nestjs/common";
import { AppError } from "./app-error.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Every admin id is a UUID; anything else names nothing, so it answers 404 like an unknown id. */
@Injectable()
export class IdPipe implements PipeTransform<string, string> {
  transform(value: string): string {
    if (!UUID.test(value)) throw notFound("resource");
    return value.toLowerCase();
  }
}

export const notFound = (what: string): AppError => new AppError(404, "not_found", `No such ${what}.`);
