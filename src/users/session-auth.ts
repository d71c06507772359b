import { CONFIG, type HttpConfig } from "../config/sections.js";
import { Inject, Injectable } from "@nestjs/common";
import type { IncomingHttpHeaders } from "node:http";
import { AppError } from "../common/app-error.js";
import { secretsEqual } from "../crypto/constant-time.js";
import { sessionCookieName, sessionTokenOf } from "./session-cookie.js";
import { type OpenSession, SessionsRepository } from "./sessions.repository.js";

/** Whether `method` only reads: the methods a cookie needs no CSRF token for. */
export function isRead(method: string): boolean {
  return method === "GET" || method === "HEAD";
}

/** The console session a request's cookie carries, and its CSRF check. */
@Injectable()
export class SessionAuth {
  /** The session cookie's name (`__Host-` prefixed behind https). */
  private readonly cookieName: string;

  constructor(
    private readonly sessions: SessionsRepository,
    @Inject(CONFIG.http) http: HttpConfig,
  ) {
    this.cookieName = sessionCookieName(http.publicBaseUrl);
  }

  /** Whether the request carries a session cookie (live or not). */
  hasCookie(headers: IncomingHttpHeaders): boolean {
    return sessionTokenOf(headers.cookie, this.cookieName) !== undefined;
  }

  /** The live session of the request's cookie; undefined without a cookie or when it opens none. */
  async fromHeaders(headers: IncomingHttpHeaders): Promise<OpenSession | undefined> {
    const token = sessionTokenOf(headers.cookie, this.cookieName);
    return token === undefined ? undefined : this.sessions.open(token);
  }

  /** `403 csrf_failed` unless a changing request carries the session's token in X-CSRF-Token (constant time). */
  checkCsrf(session: OpenSession, method: string, headers: IncomingHttpHeaders): void {
    if (isRead(method)) return;
    const given = headers["x-csrf-token"];
    if (typeof given !== "string" || !secretsEqual(given, session.csrfToken)) {
      throw new AppError(
        403,
        "csrf_failed",
        "A request with a session cookie must carry X-CSRF-Token: the session's csrfToken.",
      );
    }
  }
}
