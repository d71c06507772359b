// The port through which the job runner gets a connection's provider credentials and reports them
// refused. The engine does not know how tokens are kept alive or what a refusal does to a connection:
// the connections module provides it (src/connections/job-credentials.ts), handed to
// WorkerJobsModule.forRoot by the worker entry point.

/** The connection a job calls its provider for. */
export interface CredentialOwner {
  id: string;
  tenantId: string;
  provider: string;
}

export interface ConnectionCredentials {
  /** The access token to call the provider with now (undefined: none stored), refreshed first when due. */
  current(owner: CredentialOwner): Promise<string | undefined>;
  /** After the provider answered 401 to `failed`: the token to retry with once, or undefined (no retry). */
  afterUnauthorized(owner: CredentialOwner, failed: string): Promise<string | undefined>;
  /** The provider refused the connection's credentials (a credential failure of a job). */
  refused(owner: { tenantId: string; id: string }): Promise<void>;
}

/** Injection token of the ConnectionCredentials implementation. */
export const CONNECTION_CREDENTIALS = Symbol("CONNECTION_CREDENTIALS");
