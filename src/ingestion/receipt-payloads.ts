// A receipt's payload lives in receipt_payloads (partitioned by month, docs/operations.md
// "Partitioned history"): read beside the receipt, and a payload dropped with its month reported
// purged at that month's drop (its receipt's row is not rewritten).
import type { TenantScope } from "../auth/principal.js";
import { tenantWhere } from "../auth/principal.js";
import type { PrismaService } from "../database/prisma.service.js";

interface ReceiptRow {
  id: string;
  tenantId: string;
  receivedAt: Date;
  payloadPurgedAt: Date | null;
}

/** The receipts with payloadPurgedAt also for payloads that went with their month's partition. */
export async function withPurgeTimes<T extends ReceiptRow>(prisma: PrismaService, rows: T[]): Promise<T[]> {
  const open = rows.filter((row) => row.payloadPurgedAt === null);
  if (open.length === 0) return rows;
  const drops = await prisma.partitionDrop.findMany({
    where: { parent: "receipt_payloads", rangeStart: { lte: max(open) }, rangeEnd: { gt: min(open) } },
  });
  const dropOf = (row: ReceiptRow) =>
    drops.find((drop) => drop.rangeStart <= row.receivedAt && row.receivedAt < drop.rangeEnd);
  const inDropped = open.filter((row) => dropOf(row));
  if (inDropped.length === 0) return rows;
  // Survivors of a drop (a job still needed them) were kept in the DEFAULT partition.
  const kept = await prisma.receiptPayload.findMany({
    where: {
      OR: inDropped.map((row) => ({ receiptId: row.id, tenantId: row.tenantId, receivedAt: row.receivedAt })),
    },
    select: { receiptId: true },
  });
  const keptIds = new Set(kept.map((row) => row.receiptId));
  return rows.map((row) => {
    const drop = row.payloadPurgedAt === null && !keptIds.has(row.id) ? dropOf(row) : undefined;
    return drop ? { ...row, payloadPurgedAt: drop.droppedAt } : row;
  });
}

/** A receipt's stored payload, or null once purged. */
export async function payloadOf(prisma: PrismaService, scope: TenantScope, receipt: ReceiptRow) {
  const row = await prisma.receiptPayload.findFirst({
    where: { ...tenantWhere(scope), receiptId: receipt.id, receivedAt: receipt.receivedAt },
    select: { payload: true },
  });
  return row?.payload ?? null;
}

const max = (rows: ReceiptRow[]) => new Date(Math.max(...rows.map((row) => row.receivedAt.getTime())));
const min = (rows: ReceiptRow[]) => new Date(Math.min(...rows.map((row) => row.receivedAt.getTime())));
