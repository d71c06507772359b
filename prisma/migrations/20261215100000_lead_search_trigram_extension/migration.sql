-- Lead search (GET /admin/leads?q=, a substring of name, email, phone or the provider's lead id):
-- pg_trgm, whose trigram operator classes let a GIN index answer ILIKE '%q%'. A contrib module of
-- Postgres itself (in the postgresql-15 package, here and in the postgres:15.13 image), trusted
-- since Postgres 13: a role that may create in the database may create it, no superuser needed.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
