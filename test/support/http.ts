export interface Answer {
  status: number;
  /** The parsed JSON body; tests assert its fields. */
  body: Record<string, unknown> & { receiptIds: string[]; error?: string };
  headers: Headers;
}

async function answerOf(response: Response): Promise<Answer> {
  const text = await response.text();
  const body = (text ? JSON.parse(text) : { receiptIds: [] }) as Answer["body"];
  return { status: response.status, body, headers: response.headers };
}

/** POSTs a body (a string is sent as is) and reads the JSON answer. */
export async function post(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  return answerOf(response);
}

export async function get(url: string, headers: Record<string, string> = {}): Promise<Answer> {
  return answerOf(await fetch(url, { headers }));
}
