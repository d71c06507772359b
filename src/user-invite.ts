// `npm run user:invite -- <email> [--role operator|tenant-admin|tenant-viewer] [--tenant <id>]`:
// creates a console user (an operator by default: the first user of a new installation) and
// prints its invitation URL on standard output, alone on its line. The URL is a credential: it is
// never logged, and nothing else is written to standard output. Errors go to standard error, with
// exit code 1. Like `npm start`, it reads the keys from .env when that file exists.
import "reflect-metadata";
import { existsSync } from "node:fs";
import { NestFactory } from "@nestjs/core";
import { AuditRepository } from "./audit/audit.repository.js";
import { AppError } from "./common/app-error.js";
import { appConfigOrExit } from "./app-config.js";
import { ConfigModule } from "./config/config.module.js";
import { DatabaseModule } from "./database/database.module.js";
import { PrismaService } from "./database/prisma.service.js";
import { Metrics } from "./observability/metrics.js";
import { InvitationsRepository } from "./users/invitations.repository.js";
import { PasswordSlots } from "./users/password-slots.js";
import { USER_ROLES, type UserRole } from "./users/user.js";
import { UsersRepository } from "./users/users.repository.js";

const USAGE =
  "usage: npm run user:invite -- <email> [--role operator|tenant-admin|tenant-viewer] [--tenant <tenant id>]";
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface InviteArgs {
  email: string;
  role: UserRole;
  tenantId: string | null;
}

/** The arguments, or the reason they are not usable. */
export function parseInviteArgs(argv: string[]): InviteArgs | string {
  let email: string | undefined;
  let role: string = "operator";
  let tenantId: string | null = null;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--role") role = argv[++i] ?? "";
    else if (arg === "--tenant") tenantId = argv[++i] ?? "";
    else if (arg.startsWith("--") || email !== undefined) return `unexpected argument ${arg}`;
    else email = arg;
  }
  if (email === undefined || !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email))
    return "an e-mail address is required";
  if (!(USER_ROLES as readonly string[]).includes(role))
    return `--role must be one of ${USER_ROLES.join(", ")}`;
  if (role === "operator" && tenantId !== null) return "an operator belongs to no tenant: drop --tenant";
  if (role !== "operator" && (tenantId === null || !UUID.test(tenantId)))
    return "--tenant <tenant id> is required for a tenant role";
  return { email, role: role as UserRole, tenantId };
}

class UserInviteModule {}

if (process.argv[1]?.endsWith("user-invite.js")) {
  const args = parseInviteArgs(process.argv.slice(2));
  if (typeof args === "string") {
    process.stderr.write(`${args}\n${USAGE}\n`);
    process.exit(1);
  }
  // The keys `npm start` keeps in .env (LEADGATE_ENV_FILE), as it loads them: never over a set variable.
  const envFile = process.env.LEADGATE_ENV_FILE || ".env";
  if (existsSync(envFile)) process.loadEnvFile(envFile);
  const config = appConfigOrExit();
  const app = await NestFactory.createApplicationContext(
    {
      module: UserInviteModule,
      imports: [ConfigModule.forRoot(config), DatabaseModule],
      // PasswordSlots (and its Metrics) only because InvitationsRepository also accepts invitations.
      providers: [UsersRepository, InvitationsRepository, AuditRepository, PasswordSlots, Metrics],
    },
    { logger: false },
  );
  try {
    const prisma = app.get(PrismaService);
    if (args.tenantId !== null && !(await prisma.tenant.findUnique({ where: { id: args.tenantId } }))) {
      throw new AppError(404, "not_found", `No such tenant: ${args.tenantId}.`);
    }
    const url = await prisma.$transaction(async (tx) => {
      const user = await app.get(UsersRepository).create(tx, args);
      const invitation = await app.get(InvitationsRepository).issue(tx, user.id);
      await app.get(AuditRepository).record(
        tx,
        { keyId: null, userId: null },
        {
          action: "user.create",
          tenantId: args.tenantId,
          targetType: "user",
          targetId: user.id,
          details: { role: args.role, via: "user:invite" },
        },
      );
      return invitation.url;
    });
    process.stdout.write(`${url}\n`);
  } catch (error) {
    process.stderr.write(`user:invite failed: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  } finally {
    await app.close();
  }
}
