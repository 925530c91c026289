// The bad values the bad-input tests send: malformed and poisoned JSON, bad URLs, events, keys, ids, odd Unicode.
import { EVENT_NAMES } from '../../webhooks/events.js';

export const JSON_CT = { 'content-type': 'application/json' };
export const TWO_MB = `{"target_url":"http://127.0.0.1/h","pad":"${'x'.repeat(2 * 1024 * 1024)}"}`;
export const HUNDRED_KB = 'x'.repeat(100 * 1024);

/** Odd Unicode: lone surrogates, NUL, bidi controls, BOM, combining marks, astral emoji, a 100 KB run. */
export const ODD_STRINGS: Array<[string, string]> = [
  ['lone high surrogate', '\ud800'],
  ['lone low surrogate inside text', 'a\udc00b'],
  ['NUL', '\u0000'],
  ['NUL inside text', 'signing_request.sent\u0000'],
  ['RTL override and marks', '\u202esigning_request.sent\u200f'],
  ['BOM', '\ufeffsigning_request.sent'],
  ['emoji', '🙂🔥👩‍👩‍👧'],
  ['combining mark', 'signing_requést.sent'],
  ['overlong (100 KB)', HUNDRED_KB],
];

export const MALFORMED_JSON: Array<[string, string]> = [
  ['truncated object', '{"target_url":'],
  ['single quotes', "{'target_url':'http://127.0.0.1/h'}"],
  ['trailing comma', '{"target_url":"http://127.0.0.1/h",}'],
  ['two values', '{"target_url":"http://127.0.0.1/h"}{}'],
  ['bare word', 'undefined'],
  ['NaN', 'NaN'],
  ['unterminated string', '{"target_url":"http://127.0.0.1/h'],
  ['raw control character in a string', '{"target_url":"http://127.0.0.1/\u0001"}'],
  ['bad escape', '{"target_url":"\\x41"}'],
  ['deep nesting', `${'['.repeat(5000)}${']'.repeat(5000)}`],
];

export const POISON: Array<[string, string]> = [
  ['__proto__', '{"__proto__":{}}'],
  ['__proto__ with payload', '{"target_url":"http://127.0.0.1/h","__proto__":{"polluted":true}}'],
  ['nested __proto__', '{"target_url":"http://127.0.0.1/h","events":[],"x":{"__proto__":{"polluted":true}}}'],
  ['constructor.prototype', '{"constructor":{"prototype":{}}}'],
  [
    'constructor.prototype with payload',
    '{"target_url":"http://127.0.0.1/h","constructor":{"prototype":{"polluted":true}}}',
  ],
];

export const BAD_TARGET_URLS: Array<[string, unknown]> = [
  ['ftp scheme', 'ftp://example.com/hook'],
  ['javascript scheme', 'javascript:alert(1)'],
  ['file scheme', 'file:///etc/passwd'],
  ['data scheme', 'data:text/plain,hi'],
  ['ws scheme', 'ws://example.com/hook'],
  ['mailto', 'mailto:ops@example.com'],
  ['credentials', 'http://user:pass@example.com/hook'],
  ['username only', 'https://user@example.com/hook'],
  ['no host', 'http://'],
  ['relative', '/hook'],
  ['scheme-relative', '//example.com/hook'],
  ['bare host', 'example.com/hook'],
  ['space in host', 'http://exa mple.com/'],
  ['NUL in host', 'http://exa\u0000mple.com/'],
  ['unclosed IPv6 literal', 'http://[::1'],
  ['bad IPv6 literal', 'http://[::g]/'],
  ['3000 characters', `http://example.com/${'a'.repeat(3000)}`],
  ['3000-character host', `http://${'a'.repeat(3000)}.com/`],
  ['100 KB', `http://example.com/${HUNDRED_KB}`],
  ['empty', ''],
  ['number', 42],
  ['null', null],
  ['boolean', true],
  ['array', ['http://127.0.0.1/h']],
  ['object', { href: 'http://127.0.0.1/h' }],
];

export const BAD_EVENTS: Array<[string, unknown]> = [
  ['unknown name', ['document.exploded']],
  ['wrong case', ['SIGNING_REQUEST.SENT']],
  ['trailing space', ['signing_request.sent ']],
  ['11 names', [...EVENT_NAMES, 'document.exploded']],
  ['11 names, all unknown', Array.from({ length: 11 }, (_, i) => `unknown.${i}`)],
  ['not an array (string)', 'signing_request.sent'],
  ['not an array (object)', { 0: 'signing_request.sent' }],
  ['null', null],
  ['nested arrays', [['signing_request.sent']]],
  ['numbers', [1, 2]],
  ['null element', [null]],
  ['object element', [{ name: 'signing_request.sent' }]],
  ['boolean element', [true]],
  ['one known, one number', ['signing_request.sent', 7]],
  ['101-character name', ['s'.repeat(101)]],
  ...ODD_STRINGS.map(([label, s]): [string, unknown] => [`odd Unicode: ${label}`, [s]]),
];

export const WRONG_TYPE_BODIES: Array<[string, unknown]> = [
  ['array', []],
  ['array of object', [{ target_url: 'http://127.0.0.1/h' }]],
  ['string', 'http://127.0.0.1/h'],
  ['number', 1],
  ['true', true],
  ['null', null],
  ['empty object', {}],
  ['events only', { events: [] }],
  ['unknown field', { target_url: 'http://127.0.0.1/h', events: [], colour: 'red' }],
  ['own secret', { target_url: 'http://127.0.0.1/h', secret: 'whsec_mine' }],
  ['id supplied', { target_url: 'http://127.0.0.1/h', id: 'hook_mine' }],
];

export const BAD_IDEMPOTENCY_KEYS: Array<[string, string, boolean]> = [
  // [label, value, raw socket needed]
  ['256 characters', 'k'.repeat(256), false],
  ['inner space', 'two words', false],
  ['tab', 'a\tb', true],
  ['non-ASCII (UTF-8 bytes)', 'clé-✓', true],
  ['emoji', '🙂', true],
  ['empty', '', true],
];

// Path segments for `{id}`, as they go on the wire.
export const BAD_IDS: Array<[string, string, { raw?: boolean; code?: string }]> = [
  ['%00', '%00', { code: 'not_found' }],
  ['NUL after a hook id', 'hook_0%00', { code: 'not_found' }],
  ['bad percent-encoding', '%zz', { code: 'invalid_request' }],
  ['truncated percent-encoding', 'abc%', { code: 'invalid_request' }],
  ['encoded lone surrogate', '%ED%A0%80', { code: 'invalid_request' }],
  ['80 characters', 'h'.repeat(80), { code: 'invalid_request' }],
  ['500 characters', 'h'.repeat(500), { code: 'invalid_request' }],
  ['../ (raw)', '../me', { raw: true, code: 'not_found' }],
  ['.. (raw)', '..', { raw: true, code: 'not_found' }],
  ['encoded ../../', '..%2F..%2Fme', { code: 'not_found' }],
  ['encoded backslashes', '..%5C..%5Cme', { code: 'not_found' }],
  ['emoji', '%F0%9F%99%82', { code: 'not_found' }],
  ['RTL override', '%E2%80%AEkooh', { code: 'not_found' }],
  ['space', '%20', { code: 'not_found' }],
  ['SQL', encodeURIComponent("hook_' OR '1'='1"), { code: 'not_found' }],
  ['unknown id', 'hook_000000000000000000000000', { code: 'not_found' }],
];
