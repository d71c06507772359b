// Re-sealing a connection's stored secrets under the current key (`npm run secrets:reencrypt`):
// part of the connection store (it writes the row: transition `reseal`).
import type { Logger } from "@nestjs/common";
import { resealOrWarn } from "../crypto/reseal.js";
import type { SecretBox } from "../crypto/secret-box.js";
import {
  CONNECTION_SECRET_COLUMNS,
  type ConnectionSecretColumn,
  secretPlace,
} from "../crypto/stored-secrets.js";
import type { PrismaService } from "../database/prisma.service.js";
import { allowedFrom } from "./lifecycle/connection-states.js";

type Row = { id: string; tenant_id: string } & Record<ConnectionSecretColumn, string | null>;

/**
 * `secrets:reencrypt` for connections (src/reencrypt.ts): re-seals every stale envelope of every
 * connection under the current key, `batch` rows at a time; one that does not open is counted as
 * `unreadable` and left as it is, with a warning naming its place.
 */
export async function resealConnectionSecrets(
  prisma: PrismaService,
  box: SecretBox,
  logger: Logger,
  batch: number,
): Promise<{ resealed: number; unreadable: number }> {
  let resealed = 0;
  let unreadable = 0;
  let after = "00000000-0000-0000-0000-000000000000";
  for (;;) {
    const { rows } = await prisma.pool.query<Row>(
      `SELECT id, tenant_id, ${CONNECTION_SECRET_COLUMNS.join(", ")} FROM connections WHERE id > $1 ORDER BY id LIMIT $2`,
      [after, batch],
    );
    if (rows.length === 0) break;
    for (const row of rows) {
      for (const column of CONNECTION_SECRET_COLUMNS) {
        const envelope = row[column];
        if (envelope === null || !box.isStale(envelope)) continue;
        const sealed = resealOrWarn(box, envelope, secretPlace(column, row.id), logger, {
          connectionId: row.id,
          column,
        });
        if (sealed === undefined) {
          unreadable += 1;
          continue;
        }
        // Compare-and-set: a rotation that wrote this column meanwhile already used the current key.
        const updated = await prisma.pool.query(
          `UPDATE connections SET ${column} = $1
           WHERE id = $2 AND tenant_id = $3 AND ${column} = $4 AND status = ANY($5::text[])`,
          [sealed, row.id, row.tenant_id, envelope, [...allowedFrom("reseal")]],
        );
        resealed += updated.rowCount ?? 0;
      }
    }
    after = rows.at(-1)!.id;
  }
  return { resealed, unreadable };
}
