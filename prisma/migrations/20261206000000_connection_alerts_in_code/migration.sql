-- Connection alerts (connection.reauthorization_required, connection.credential_error, and the
-- clearing of a disabled connection's alerts) are raised by the connection store, in the transaction
-- of the transition that changes the status or the grant (src/connections/connection-store.ts,
-- lifecycle/connection-states.ts alertChanges), no longer by a trigger on every UPDATE of the row.
DROP TRIGGER IF EXISTS connections_alerts ON connections;
DROP FUNCTION IF EXISTS connections_alerts();
DROP FUNCTION IF EXISTS connection_alerts(connections, connections);
