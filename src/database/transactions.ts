import { Injectable } from "@nestjs/common";
import type { Prisma } from "../generated/prisma/client.js";
import { PrismaService } from "./prisma.service.js";

/** A transaction's client: repositories take it to write inside the caller's transaction. */
export type Tx = Prisma.TransactionClient;

/** Runs admin actions atomically: the change and its audit row commit together or not at all. */
@Injectable()
export class Transactions {
  constructor(private readonly prisma: PrismaService) {}

  run<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.prisma.$transaction(work);
  }
}
