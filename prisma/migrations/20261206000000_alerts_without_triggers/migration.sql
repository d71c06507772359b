-- No business logic in triggers (issue 27): the code that changes a state raises its alert, and the
-- alert book (src/alerts/alert-book.ts) creates the alert's notification jobs in the same
-- transaction, with the retry settings of OPERATION_SETTINGS.notification:
--   job.dead              the job state machine (src/jobs/state/), through its JobOutcomes port
--   destination.failing   the circuit breaker (src/common/outbound/circuit-breaker.ts), through CircuitEvents
--   payload.conflict      the receipt writer (src/ingestion/receipt-writer.ts)
--   connection.*          the connection store (src/connections/)
-- So every trigger of migrations 20261202020000_alerts and 20261204000000_dead_job_alerts_per_statement
-- goes, with the functions they called and the SQL functions of the alert book.

DROP TRIGGER jobs_alerts ON jobs;
DROP TRIGGER alerts_opened ON alerts;
DROP TRIGGER alerts_resolved ON alerts;
DROP TRIGGER connections_alerts ON connections;
DROP TRIGGER circuit_openings_opened ON destination_circuit_openings;
DROP TRIGGER circuit_openings_closed ON destination_circuit_openings;
DROP TRIGGER payload_conflicts_alerts ON payload_conflicts;

DROP FUNCTION jobs_alerts();
DROP FUNCTION jobs_dead_alerts(jobs[]);
DROP FUNCTION jobs_recovered_alerts(jobs[]);
DROP FUNCTION alerts_opened();
DROP FUNCTION alerts_resolved();
DROP FUNCTION alert_notify(alerts, text);
DROP FUNCTION connections_alerts();
DROP FUNCTION connection_alerts(connections, connections);
DROP FUNCTION circuit_openings_opened();
DROP FUNCTION circuit_openings_closed();
DROP FUNCTION circuit_opened(destination_circuit_openings);
DROP FUNCTION payload_conflicts_alerts();
DROP FUNCTION payload_conflict_alert(payload_conflicts);
DROP FUNCTION alert_raise(uuid, text, uuid, text, text, text, text, int);
DROP FUNCTION alert_clear(uuid, text, uuid, text, text, text);
DROP FUNCTION alert_group_key(text, uuid, text, text);
