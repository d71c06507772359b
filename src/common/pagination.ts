import type { Type as Class } from "@nestjs/common";
import { ApiProperty, ApiPropertyOptional } from "@nestjs/swagger";
import { Type } from "class-transformer";
import { IsInt, Matches, Max, Min } from "class-validator";
import { AppError } from "./app-error.js";
import { Optional } from "./validation.js";

/** `?limit=&cursor=` of every list (api.md): newest first, 1–200 items, default 50. */
export class ListQuery {
  @ApiPropertyOptional({ minimum: 1, maximum: 200, default: 50 })
  @Optional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(200)
  limit: number = 50;

  @ApiPropertyOptional({ description: "nextCursor of the previous page" })
  @Optional()
  @Matches(/^[A-Za-z0-9_-]{1,200}$/, { message: "cursor must be a nextCursor from a previous page" })
  cursor?: string;
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

const pages = new Map<Class<unknown>, Class<Page<unknown>>>();

/**
 * The OpenAPI schema of a list's answer, `<Item>Page`: `{ items: Item[], nextCursor }`, for
 * `@ApiOkResponse({ type: PageOf(Item) })` (one class per item type).
 */
export function PageOf<T>(item: Class<T>): Class<Page<T>> {
  const known = pages.get(item);
  if (known) return known as Class<Page<T>>;
  class ItemPage implements Page<T> {
    @ApiProperty({ type: () => item, isArray: true })
    items!: T[];

    @ApiProperty({ type: String, nullable: true, description: "null on the last page" })
    nextCursor!: string | null;
  }
  Object.defineProperty(ItemPage, "name", { value: `${item.name}Page` });
  pages.set(item, ItemPage);
  return ItemPage;
}

interface Position {
  at: Date;
  id: string;
}

function decodeCursor(cursor: string): Position {
  const [at, id] = Buffer.from(cursor, "base64url").toString("utf8").split("|");
  const date = new Date(at ?? "");
  if (
    Number.isNaN(date.getTime()) ||
    !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(id ?? "")
  ) {
    throw new AppError(400, "validation_failed", "Invalid input: cursor.", {
      cursor: ["must be a nextCursor from a previous page"],
    });
  }
  return { at: date, id: id! };
}

/** Where the page after `query.cursor` starts (undefined: the first page), for lists read with SQL. */
export function positionAfter(query: ListQuery): { at: Date; id: string } | undefined {
  return query.cursor ? decodeCursor(query.cursor) : undefined;
}

/**
 * Keyset pagination on `(<time column> desc, id desc)`: the `where` that starts after the cursor,
 * and the page built from `limit + 1` rows (the extra row tells whether there is a next page).
 */
export function pageAfter<F extends string>(
  field: F,
  query: ListQuery,
): { take: number; where: Record<string, unknown> } {
  if (!query.cursor) return { take: query.limit + 1, where: {} };
  const { at, id } = decodeCursor(query.cursor);
  return {
    take: query.limit + 1,
    where: { OR: [{ [field]: { lt: at } }, { [field]: at, id: { lt: id } }] },
  };
}

export function toPage<T extends { id: string }>(rows: T[], query: ListQuery, at: (row: T) => Date): Page<T> {
  const items = rows.slice(0, query.limit);
  const last = items.at(-1);
  return {
    items,
    nextCursor:
      rows.length > query.limit && last
        ? Buffer.from(`${at(last).toISOString()}|${last.id}`).toString("base64url")
        : null,
  };
}
