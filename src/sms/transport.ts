// How a text message leaves the process. Guarantees: the Twilio transport sends one form-encoded POST to the
// Messages resource with HTTP basic auth and returns the message SID; a failure says whether a retry may help
// (a 429, a 5xx or no answer) or not (any other 4xx: a bad number, a bad credential); the auth token never appears
// in an error message.
export type SmsMessage = { to: string; body: string };
export type SmsSent = { providerId: string };

export interface SmsTransport {
  readonly kind: 'twilio';
  send(message: SmsMessage): Promise<SmsSent>;
}

export class SmsSendError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
  }
}

export type TwilioOptions = {
  accountSid: string;
  authToken: string;
  from: string;
  /** https://api.twilio.com unless SMS_API_BASE says otherwise (tests point it at a local peer). */
  apiBase: string;
  timeoutMs?: number;
};

export function createTwilioTransport(o: TwilioOptions): SmsTransport {
  const url = `${o.apiBase.replace(/\/$/, '')}/2010-04-01/Accounts/${encodeURIComponent(o.accountSid)}/Messages.json`;
  const authorization = `Basic ${Buffer.from(`${o.accountSid}:${o.authToken}`).toString('base64')}`;
  return {
    kind: 'twilio',
    async send(m) {
      let res: Response;
      try {
        res = await fetch(url, {
          method: 'POST',
          headers: { authorization, 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ To: m.to, From: o.from, Body: m.body }).toString(),
          signal: AbortSignal.timeout(o.timeoutMs ?? 15_000),
        });
      } catch (err) {
        throw new SmsSendError(`SMS provider unreachable: ${(err as Error).name}`, true);
      }
      const text = await res.text();
      let json: { sid?: unknown; message?: unknown; code?: unknown } = {};
      try {
        json = JSON.parse(text);
      } catch {
        // The status decides below.
      }
      if (res.ok && typeof json.sid === 'string') return { providerId: json.sid };
      const detail = typeof json.message === 'string' ? `: ${json.message.slice(0, 200)}` : '';
      throw new SmsSendError(
        `SMS provider answered ${res.status}${detail}`,
        // A 2xx without a SID may have sent the message: not retried, so no one gets it twice.
        res.status === 429 || res.status >= 500,
      );
    },
  };
}
