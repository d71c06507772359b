-- Clients: the businesses a tenant (an agency) serves, between the tenant and its connections
-- (api.md "Clients"). Settings are inherited tenant defaults, then client defaults, then the
-- connection's own. Safe on a live installation: the statements run one by one, and processes of
-- the previous release, which know no clients, keep working throughout: a tenant they create gets
-- its first client from a trigger, and a connection they insert without a client gets the tenant's
-- first one. Every existing tenant gets one client named after it, every existing connection points
-- at it, and nothing any route answered before changes except the new fields.
CREATE TABLE "clients" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "tenant_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "defaults" JSONB NOT NULL DEFAULT '{}',
    "branding" JSONB NOT NULL DEFAULT '{}',
    "timezone" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "deleted_at" TIMESTAMPTZ(3),

    CONSTRAINT "clients_pkey" PRIMARY KEY ("id")
);

-- GET /admin/clients and the tenant's first client: oldest first.
CREATE INDEX "clients_tenant_id_created_at_id_idx" ON "clients"("tenant_id", "created_at", "id");

-- The target of the connections' composite foreign key (a connection's client is of its tenant).
CREATE UNIQUE INDEX "clients_id_tenant_id_key" ON "clients"("id", "tenant_id");

ALTER TABLE "clients" ADD CONSTRAINT "clients_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- A tenant starts with one client named after it, in the zone of its default business hours (else
-- UTC). The one home of that rule: POST /admin/tenants relies on it too.
CREATE FUNCTION tenants_first_client() RETURNS trigger LANGUAGE plpgsql AS E'BEGIN INSERT INTO clients (tenant_id, name, timezone, created_at) VALUES (NEW.id, NEW.name, COALESCE(NEW.defaults #>> ''{businessHours,timezone}'', ''UTC''), NEW.created_at)\x3b RETURN NULL\x3b END';
CREATE TRIGGER tenants_first_client AFTER INSERT ON tenants FOR EACH ROW EXECUTE FUNCTION tenants_first_client();

INSERT INTO "clients" ("tenant_id", "name", "timezone", "created_at")
SELECT t.id, t.name, COALESCE(t.defaults #>> '{businessHours,timezone}', 'UTC'), t.created_at
FROM "tenants" t
WHERE NOT EXISTS (SELECT 1 FROM "clients" c WHERE c.tenant_id = t.id);

ALTER TABLE "connections" ADD COLUMN "client_id" UUID;

-- A connection inserted without a client (by a process of the previous release) belongs to its
-- tenant's first live client. This release always names one.
CREATE FUNCTION connections_default_client() RETURNS trigger LANGUAGE plpgsql AS E'BEGIN SELECT id INTO NEW.client_id FROM clients WHERE tenant_id = NEW.tenant_id AND deleted_at IS NULL ORDER BY created_at, id LIMIT 1\x3b RETURN NEW\x3b END';
CREATE TRIGGER connections_default_client BEFORE INSERT ON connections FOR EACH ROW WHEN (NEW.client_id IS NULL)
  EXECUTE FUNCTION connections_default_client();

UPDATE "connections" c SET "client_id" = (
  SELECT cl.id FROM "clients" cl WHERE cl.tenant_id = c.tenant_id ORDER BY cl.created_at, cl.id LIMIT 1
) WHERE c.client_id IS NULL;

ALTER TABLE "connections" ALTER COLUMN "client_id" SET NOT NULL;

-- ?clientId on lists and reports, and a client's delete looking for its live connections.
CREATE INDEX "connections_client_id_idx" ON "connections"("client_id");

ALTER TABLE "connections" ADD CONSTRAINT "connections_client_id_tenant_id_fkey" FOREIGN KEY ("client_id", "tenant_id") REFERENCES "clients"("id", "tenant_id") ON DELETE RESTRICT ON UPDATE CASCADE;
