// Phone validation against libphonenumber's metadata, and the Twilio transport against a local HTTP peer that
// records what it receives and answers as Twilio does.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { ConfigError, loadConfig } from '../config.js';
import { toE164 } from './phone.js';
import { createTwilioTransport, SmsSendError } from './transport.js';

test('E.164 only, valid for its country', () => {
  assert.equal(toE164('+14155552671'), '+14155552671');
  assert.equal(toE164('+491711234567'), '+491711234567');
  assert.equal(toE164('+447911123456'), '+447911123456');
  for (const bad of [
    '4155552671',
    '+1 415 555 2671',
    '+1-415-555-2671',
    '+0123456789',
    '+1415',
    '+999999999999',
    '',
    '++14155552671',
    '+14155552671 ',
    '+1415555267a',
  ])
    assert.equal(toE164(bad), null, JSON.stringify(bad));
});

describe('Twilio transport', () => {
  type Seen = { method: string; url: string; authorization: string; type: string; form: URLSearchParams };
  const seen: Seen[] = [];
  let answer: { status: number; body: string } = { status: 201, body: '{"sid":"SM123"}' };
  let server: http.Server;
  let base: string;
  before(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        seen.push({
          method: req.method!,
          url: req.url!,
          authorization: req.headers.authorization ?? '',
          type: req.headers['content-type'] ?? '',
          form: new URLSearchParams(body),
        });
        res.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  const transport = () =>
    createTwilioTransport({ accountSid: 'AC42', authToken: 'tok-secret', from: '+15550001111', apiBase: base });

  test('one form POST to the Messages resource with basic auth; the SID comes back', async () => {
    answer = { status: 201, body: '{"sid":"SM123","status":"queued"}' };
    assert.deepEqual(await transport().send({ to: '+14155552671', body: 'Sign here: https://x/sign/abc' }), {
      providerId: 'SM123',
    });
    const s = seen.at(-1)!;
    assert.equal(s.method, 'POST');
    assert.equal(s.url, '/2010-04-01/Accounts/AC42/Messages.json');
    assert.equal(s.authorization, `Basic ${Buffer.from('AC42:tok-secret').toString('base64')}`);
    assert.equal(s.type, 'application/x-www-form-urlencoded');
    assert.deepEqual(Object.fromEntries(s.form), {
      To: '+14155552671',
      From: '+15550001111',
      Body: 'Sign here: https://x/sign/abc',
    });
  });

  test('failures say whether a retry may help, and never carry the token', async () => {
    const cases: Array<[number, string, boolean]> = [
      [400, '{"code":21211,"message":"The To number is not valid."}', false],
      [401, '{"code":20003,"message":"Authenticate"}', false],
      [429, '{"code":20429,"message":"Too Many Requests"}', true],
      [500, 'oops', true],
      [503, '', true],
    ];
    for (const [status, body, retryable] of cases) {
      answer = { status, body };
      await assert.rejects(transport().send({ to: '+14155552671', body: 'x' }), (e: unknown) => {
        assert.ok(e instanceof SmsSendError, 'e instanceof SmsSendError');
        assert.equal(e.retryable, retryable, `${status}`);
        assert.match(e.message, new RegExp(`${status}`));
        assert.ok(!e.message.includes('tok-secret'), "!e.message.includes('tok-secret')");
        return true;
      });
    }
    const closed = createTwilioTransport({
      accountSid: 'AC42',
      authToken: 'tok-secret',
      from: '+15550001111',
      apiBase: 'http://127.0.0.1:9',
    });
    await assert.rejects(closed.send({ to: '+14155552671', body: 'x' }), (e: unknown) => {
      assert.ok(e instanceof SmsSendError && e.retryable, 'e instanceof SmsSendError && e.retryable');
      return true;
    });
  });
});

test('SMS_URL and SMS_API_BASE', () => {
  assert.equal(loadConfig({}).sms, null);
  assert.deepEqual(
    loadConfig({ SMS_URL: 'twilio://AC42:tok@+15550001111', SMS_API_BASE: 'http://127.0.0.1:8080' }).sms,
    {
      provider: 'twilio',
      accountSid: 'AC42',
      authToken: 'tok',
      from: '+15550001111',
      apiBase: 'http://127.0.0.1:8080',
    },
  );
  assert.equal(loadConfig({ SMS_URL: 'twilio://AC42:tok@+15550001111' }).sms?.apiBase, 'https://api.twilio.com');
  for (const bad of [
    'smtp://AC42:tok@+15550001111',
    'twilio://AC42@+15550001111',
    'twilio://AC42:secret-tok@15550001111',
  ])
    assert.throws(
      () => loadConfig({ SMS_URL: bad }),
      (e: unknown) => e instanceof ConfigError && /^SMS_URL /.test(e.message) && !e.message.includes('secret-tok'),
    );
});
