import { createParamDecorator, type ExecutionContext } from "@nestjs/common";
import type { AuthenticatedRequest } from "./api-key.guard.js";
import type { Principal } from "./principal.js";

/** The authenticated caller of an admin route (set by ApiKeyGuard). */
export const CurrentPrincipal = createParamDecorator(
  (_data: unknown, context: ExecutionContext): Principal =>
    context.switchToHttp().getRequest<AuthenticatedRequest>().principal!,
);
