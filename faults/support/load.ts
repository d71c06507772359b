// A provider's side of the faults: deliveries sent with some concurrency, each retried on anything
// but a 2xx (as every provider does), and what each attempt got.

export interface Delivery {
  /** The event's own id (Static Forms submissionId, Thumbtack negotiationID). */
  eventId: string;
  path: string;
  body: string;
  headers: Record<string, string>;
}

export interface Attempt {
  /** 0 stands for a network error (refused, reset, timeout). */
  status: number;
  /** The Retry-After header of the answer, if any. */
  retryAfter?: string;
  /** What the scenario was doing when the attempt was sent (e.g. "postgres down"). */
  phase: string;
}

export interface Outcome {
  /** Every attempt, in order. */
  attempts: Attempt[];
  /** The receipt ids of the first 2xx answer. */
  receiptIds?: string[];
}

export async function send(
  baseUrl: string,
  delivery: Delivery,
  timeoutMs = 10_000,
): Promise<{ status: number; receiptIds?: string[]; retryAfter?: string }> {
  try {
    const response = await fetch(`${baseUrl}${delivery.path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...delivery.headers },
      body: delivery.body,
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await response.text();
    const receiptIds =
      response.status < 300 ? (JSON.parse(text) as { receiptIds?: string[] }).receiptIds : undefined;
    return {
      status: response.status,
      receiptIds,
      retryAfter: response.headers.get("retry-after") ?? undefined,
    };
  } catch {
    return { status: 0 };
  }
}

/**
 * Sends every delivery once, `concurrency` at a time, spreading them over `targets` (API base URLs,
 * read at each send so a restarted API is used at once). `onSent` runs after each answer.
 */
export async function sendAll(
  deliveries: Delivery[],
  targets: () => string[],
  concurrency: number,
  outcomes: Map<string, Outcome>,
  onSent: (count: number) => void | Promise<void> = () => undefined,
  phase: () => string = () => "steady",
): Promise<void> {
  let next = 0;
  let done = 0;
  const workers = Array.from({ length: concurrency }, async () => {
    while (next < deliveries.length) {
      const index = next++;
      const delivery = deliveries[index]!;
      const urls = targets();
      const sentIn = phase();
      const answer = await send(urls[index % urls.length]!, delivery);
      const outcome = outcomes.get(delivery.eventId) ?? { attempts: [] };
      outcome.attempts.push({ status: answer.status, phase: sentIn, retryAfter: answer.retryAfter });
      if (answer.receiptIds && !outcome.receiptIds) outcome.receiptIds = answer.receiptIds;
      outcomes.set(delivery.eventId, outcome);
      await onSent(++done);
    }
  });
  await Promise.all(workers);
}

/** The provider's retries: every delivery without a 2xx yet is sent again until it gets one. */
export async function retryUntilAccepted(
  deliveries: Delivery[],
  targets: () => string[],
  outcomes: Map<string, Outcome>,
  rounds = 20,
): Promise<void> {
  for (let round = 0; round < rounds; round++) {
    const pending = deliveries.filter((delivery) => !outcomes.get(delivery.eventId)?.receiptIds);
    if (pending.length === 0) return;
    await sendAll(pending, targets, 16, outcomes, undefined, () => "retries");
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

export const isSuccess = (status: number) => status >= 200 && status < 300;
