// Alerts (api.md "Alerts and notification channels"): list, read, acknowledge, resolve by hand.
import { Controller, Get, HttpCode, Injectable, Param, Post, Query } from "@nestjs/common";
import { ApiOkResponse, ApiOperation, ApiProperty, ApiPropertyOptional, ApiTags } from "@nestjs/swagger";
import { IsIn, IsUUID } from "class-validator";
import { AlertBook } from "../alerts/alert-book.js";
import {
  ALERT_STATUSES,
  ALERT_TYPES,
  type AlertStatus,
  type AlertType,
  AlertView,
} from "../alerts/alert-types.js";
import { listScope, TenantListQuery } from "../auth/list-filters.js";
import { AdminApi } from "../auth/api-key.guard.js";
import { CurrentPrincipal } from "../auth/current-principal.js";
import { type Principal, scopeOf, type TenantScope } from "../auth/principal.js";
import { Transactions } from "../database/transactions.js";
import { Optional } from "../common/validation.js";
import { AuditRepository } from "../audit/audit.repository.js";
import { IdPipe, notFound } from "../common/id.pipe.js";
import { type Page, PageOf, positionAfter, toPage } from "../common/pagination.js";

export class AlertsQuery extends TenantListQuery {
  @ApiPropertyOptional({ enum: ALERT_STATUSES })
  @Optional()
  @IsIn(ALERT_STATUSES)
  status?: AlertStatus;

  @ApiPropertyOptional({ enum: ALERT_TYPES })
  @Optional()
  @IsIn(ALERT_TYPES)
  type?: AlertType;

  @ApiPropertyOptional({ format: "uuid" })
  @Optional()
  @IsUUID()
  connectionId?: string;
}

export class AlertAnswer {
  @ApiProperty({ type: () => AlertView })
  alert!: AlertView;
}

/** Acknowledging and resolving by hand, each with its audit row in one transaction. */
@Injectable()
export class AlertsAdminService {
  constructor(
    private readonly alerts: AlertBook,
    private readonly transactions: Transactions,
    private readonly audit: AuditRepository,
  ) {}

  /** 200 `{ alert }` either way; only a change (not an alert already past that status) is audited. */
  async settle(
    principal: Principal,
    scope: TenantScope,
    id: string,
    to: "acknowledged" | "resolved",
  ): Promise<AlertAnswer> {
    const alert = await this.transactions.run(async (tx) => {
      const settled = await this.alerts.settle(tx, scope, id, to);
      if (!settled) throw notFound("alert");
      if (settled.moved) {
        await this.audit.record(tx, principal, {
          action: to === "acknowledged" ? "alert.acknowledge" : "alert.resolve",
          tenantId: settled.alert.tenantId,
          targetType: "alert",
          targetId: settled.alert.id,
          details: { type: settled.alert.type },
        });
      }
      return settled.alert;
    });
    return { alert };
  }
}

@ApiTags("alerts")
@AdminApi()
@Controller("admin/alerts")
export class AlertsController {
  constructor(
    private readonly alerts: AlertBook,
    private readonly service: AlertsAdminService,
  ) {}

  @ApiOperation({ description: "Lists alerts, newest first, filtered by status, type and connection." })
  @Get()
  @ApiOkResponse({
    description:
      "alerts, newest first: `{ id, type, status, connectionId, operation, errorCode, count, firstSeenAt, lastSeenAt, resolvedAt, summary }`",
    type: PageOf(AlertView),
  })
  async list(
    @CurrentPrincipal() principal: Principal,
    @Query() query: AlertsQuery,
  ): Promise<Page<AlertView>> {
    const rows = await this.alerts.list(
      listScope(principal, query.tenantId),
      { status: query.status, type: query.type, connectionId: query.connectionId },
      { take: query.limit + 1, after: positionAfter(query) },
    );
    return toPage(rows, query, (row) => row.firstSeenAt);
  }

  @ApiOperation({
    description: "Reads one alert: its type, status, group, count and when it was first and last seen.",
  })
  @Get(":id")
  @ApiOkResponse({ type: AlertView })
  async get(@CurrentPrincipal() principal: Principal, @Param("id", IdPipe) id: string): Promise<AlertView> {
    const found = await this.alerts.find(scopeOf(principal), id);
    if (!found) throw notFound("alert");
    const { connectionName: _name, ...alert } = found;
    return alert;
  }

  @ApiOperation({ description: "Acknowledges an alert: someone is on it." })
  @Post(":id/acknowledge")
  @HttpCode(200)
  @ApiOkResponse({
    description: "`{ alert }`: someone is on it (open → acknowledged); audited",
    type: AlertAnswer,
  })
  acknowledge(@CurrentPrincipal() principal: Principal, @Param("id", IdPipe) id: string) {
    return this.service.settle(principal, scopeOf(principal), id, "acknowledged");
  }

  @ApiOperation({ description: "Resolves an alert by hand; its channels are told." })
  @Post(":id/resolve")
  @HttpCode(200)
  @ApiOkResponse({
    description: "`{ alert }`: resolved by hand (its channels are told); audited",
    type: AlertAnswer,
  })
  resolve(@CurrentPrincipal() principal: Principal, @Param("id", IdPipe) id: string) {
    return this.service.settle(principal, scopeOf(principal), id, "resolved");
  }
}
