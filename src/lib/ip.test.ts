import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import ipaddr from 'ipaddr.js';
import {
  canonicaliseAllowlist,
  canonicaliseEntry,
  addressBucket,
  compileAllowlist,
  formatIPv4,
  isAllowed,
  maskIp,
  normaliseAddress,
} from './ip.js';

const canonical: Array<[input: string, expected: string]> = [
  ['10.1.2.3', '10.1.2.3'],
  ['10.1.2.3/32', '10.1.2.3'],
  ['10.1.2.3/24', '10.1.2.0/24'],
  ['10.1.2.3/8', '10.0.0.0/8'],
  ['255.255.255.255/31', '255.255.255.254/31'],
  ['1.2.3.4/0', '0.0.0.0/0'],
  ['0.0.0.0', '0.0.0.0'],
  ['  192.0.2.7  ', '192.0.2.7'],
  ['\t192.0.2.0/24\n', '192.0.2.0/24'],
  ['2001:DB8:0:0:0:0:0:1', '2001:db8::1'],
  ['2001:0db8:0000:0000:0000:0000:0000:0001', '2001:db8::1'],
  ['2001:db8::1/128', '2001:db8::1'],
  ['2001:db8::1/64', '2001:db8::/64'],
  ['2001:DB8:AB:CD::/48', '2001:db8:ab::/48'],
  ['2001:db8:0:1:0:0:0:1', '2001:db8:0:1::1'], // a single zero group is not compressed
  ['2001:0:0:1:0:0:0:1', '2001:0:0:1::1'], // longest run wins
  ['2001:db8:0:0:1:0:0:1', '2001:db8::1:0:0:1'], // first run wins a tie
  ['::', '::'],
  ['::/0', '::/0'],
  ['::1', '::1'],
  ['1:2:3:4:5:6:7::', '1:2:3:4:5:6:7:0'],
  ['fe80::1/10', 'fe80::/10'],
  ['::ffff:1.2.3.4', '1.2.3.4'], // bare IPv4-mapped is stored as plain IPv4
  ['::FFFF:0102:0304', '1.2.3.4'],
  ['0:0:0:0:0:ffff:1.2.3.4', '1.2.3.4'],
  ['64:ff9b::1.2.3.4', '64:ff9b::102:304'],
];

for (const [input, expected] of canonical) {
  test(`canonicaliseEntry ${JSON.stringify(input)} -> ${expected}`, () => {
    assert.deepEqual(canonicaliseEntry(input), { ok: true, value: expected });
  });
}

const refused: string[] = [
  '',
  '   ',
  'garbage',
  'localhost',
  '010.0.0.1',
  '1.2.3',
  '1.2.3.4.5',
  '0x7f.0.0.1',
  '127.1',
  '2130706433',
  '256.0.0.1',
  '1.2.3.-1',
  '1..2.3',
  '１.2.3.4', // full-width digit
  '1.2.3.4/33',
  '1.2.3.4/-1',
  '1.2.3.4/08',
  '1.2.3.4/',
  '1.2.3.4/ 8',
  '1.2.3.4/24/8',
  '1.2.3.4/0x8',
  '1.2.3.4 /24',
  '1.2.3.4:80',
  '2001:db8::1/129',
  '2001:db8::1/064',
  'fe80::1%eth0',
  '[::1]',
  '[::1]:443',
  '::1/',
  '1::2::3',
  ':::',
  ':1::',
  '1::2:',
  '1:2:3:4:5:6:7:8:9',
  '1:2:3:4:5:6:7',
  '1:2:3:4:5:6:7:8::',
  '12345::1',
  'g::1',
  '::1.2.3',
  '::010.0.0.1',
  '1.2.3.4::',
  '::ffff:10.0.0.0/104',
  '::ffff:1.2.3.4/24',
  '::ffff:1.2.3.4/128',
  '::ffff:a00:0/96',
  '1'.repeat(100),
];

for (const input of refused) {
  test(`canonicaliseEntry refuses ${JSON.stringify(input.length > 20 ? input.slice(0, 20) + '…' : input)}`, () => {
    const r = canonicaliseEntry(input);
    assert.equal(r.ok, false);
    assert.ok(!r.ok && r.reason.length > 0, '!r.ok && r.reason.length > 0');
  });
}

test('canonicaliseEntry refuses non-strings at runtime', () => {
  assert.equal(canonicaliseEntry(42 as unknown as string).ok, false);
});

test('canonicaliseAllowlist canonicalises, dedupes after canonicalisation and keeps first-seen order', () => {
  assert.deepEqual(
    canonicaliseAllowlist([
      '10.1.2.3/24',
      '2001:DB8::1',
      '10.1.2.0/24',
      ' 2001:db8:0::1/128',
      '::ffff:9.9.9.9',
      '9.9.9.9/32',
    ]),
    { ok: true, list: ['10.1.2.0/24', '2001:db8::1', '9.9.9.9'] },
  );
  assert.deepEqual(canonicaliseAllowlist([]), { ok: true, list: [] });
});

test('canonicaliseAllowlist refuses the whole save and names the bad entry', () => {
  const r = canonicaliseAllowlist(['10.0.0.1', '010.0.0.2', 'also bad']);
  assert.equal(r.ok, false);
  assert.ok(
    !r.ok && r.entry === '010.0.0.2' && r.reason.length > 0,
    "!r.ok && r.entry === '010.0.0.2' && r.reason.length > 0",
  );
  const mapped = canonicaliseAllowlist(['::ffff:1.2.3.4/24']);
  assert.ok(!mapped.ok && mapped.entry === '::ffff:1.2.3.4/24', "!mapped.ok && mapped.entry === '::ffff:1.2.3.4/24'");
});

test('canonicaliseAllowlist allows 50 distinct entries and refuses 51', () => {
  const fifty = Array.from({ length: 50 }, (_, i) => `10.0.0.${i}`);
  const ok = canonicaliseAllowlist(fifty);
  assert.ok(ok.ok && ok.list.length === 50, 'ok.ok && ok.list.length === 50');
  assert.deepEqual(canonicaliseAllowlist([...fifty, '10.0.0.50']), {
    ok: false,
    entry: '',
    reason: 'at most 50 entries',
  });
});

test('canonicaliseAllowlist counts entries after dedupe', () => {
  const fifty = Array.from({ length: 50 }, (_, i) => `10.0.0.${i}`);
  const r = canonicaliseAllowlist([...fifty, ...fifty.map((e) => `${e}/32`), '::ffff:10.0.0.0']);
  assert.ok(r.ok && r.list.length === 50, 'r.ok && r.list.length === 50');
});

const normalised: Array<[string | undefined | null, string | null]> = [
  ['127.0.0.2', '127.0.0.2'],
  ['::1', '::1'],
  ['::ffff:127.0.0.3', '127.0.0.3'],
  ['::FFFF:7f00:3', '127.0.0.3'],
  ['2001:DB8:0:0:0:0:0:1', '2001:db8::1'],
  ['fe80::1%eth0', null],
  ['10.0.0.0/8', null],
  [' 1.2.3.4', null],
  ['01.2.3.4', null],
  ['', null],
  [undefined, null],
  [null, null],
];

for (const [input, expected] of normalised) {
  test(`normaliseAddress ${JSON.stringify(input)} -> ${expected}`, () => {
    assert.equal(normaliseAddress(input), expected);
  });
}

const LIST = ['10.1.2.0/24', '192.0.2.7', '2001:db8::/32', '::1'];
const matching: Array<[list: string[], address: string | undefined | null, allowed: boolean]> = [
  [[], '203.0.113.9', true],
  [[], undefined, true],
  [[], 'nonsense', true],
  [LIST, '10.1.2.0', true],
  [LIST, '10.1.2.255', true],
  [LIST, '10.1.3.0', false],
  [LIST, '192.0.2.7', true],
  [LIST, '192.0.2.8', false],
  [LIST, '::ffff:10.1.2.77', true], // mapped caller vs IPv4 block
  [LIST, '::ffff:192.0.2.7', true], // mapped caller vs IPv4 address
  [LIST, '::ffff:c000:207', true],
  [LIST, '::ffff:192.0.2.8', false],
  [LIST, '2001:db8:ffff::1', true],
  [LIST, '2001:db9::1', false],
  [LIST, '::1', true],
  [LIST, '0:0:0:0:0:0:0:1', true],
  [LIST, '::2', false],
  [LIST, undefined, false],
  [LIST, null, false],
  [LIST, '', false],
  [LIST, 'not-an-ip', false],
  [LIST, 'fe80::1%eth0', false],
  [['0.0.0.0/0'], '::ffff:8.8.8.8', true],
  [['::/0'], '2001:db8::1', true],
  [['::/0'], '8.8.8.8', false], // IPv6 blocks never match IPv4 callers
  [['::/0'], '::ffff:8.8.8.8', false],
  [['1.2.3.4'], '::1.2.3.4', false], // IPv4-compatible form is not IPv4-mapped
  [['garbage'], '1.2.3.4', false], // a corrupted stored list fails closed
  [['garbage', '1.2.3.4'], '1.2.3.4', true],
];

for (const [list, address, allowed] of matching) {
  test(`isAllowed ${JSON.stringify(list)} ${JSON.stringify(address)} -> ${allowed}`, () => {
    assert.equal(isAllowed(list, address), allowed);
    assert.equal(compileAllowlist(list)(address), allowed);
  });
}

test('two lists that join to the same text are not confused', () => {
  assert.equal(isAllowed(['1.2.3.4', '5.6.7.8'], '5.6.7.8'), true);
  assert.equal(isAllowed(['1.2.3.4,5.6.7.8'], '5.6.7.8'), false);
  assert.equal(isAllowed(['1.2.3.4\n5.6.7.8'], '5.6.7.8'), false);
});

test('addressBucket: an IPv4 address is its own bucket (mapped or not); IPv6 shares its /64', () => {
  assert.equal(addressBucket('203.0.113.42'), '203.0.113.42');
  assert.equal(addressBucket('::ffff:203.0.113.42'), '203.0.113.42');
  assert.equal(addressBucket('2001:db8:1:2:aaaa::1'), '2001:db8:1:2::/64');
  assert.equal(addressBucket('2001:DB8:1:2:ffff:ffff:ffff:ffff'), '2001:db8:1:2::/64');
  assert.notEqual(addressBucket('2001:db8:1:3::1'), addressBucket('2001:db8:1:2::1'));
  assert.equal(addressBucket('::1'), '::/64');
  assert.equal(addressBucket('not an address'), null);
  assert.equal(addressBucket(undefined), null);
});

const masked: Array<[string | undefined | null, string | null]> = [
  ['203.0.113.42', '203.0.113.x'],
  ['::ffff:203.0.113.42', '203.0.113.x'],
  ['2001:db8:85a3:8d3:1319:8a2e:370:7348', '2001:db8:85a3::x'],
  ['2001:DB8::1', '2001:db8:0::x'],
  ['::1', '0:0:0::x'],
  ['garbage', null],
  ['fe80::1%eth0', null],
  [undefined, null],
  [null, null],
];

for (const [input, expected] of masked) {
  test(`maskIp ${JSON.stringify(input)} -> ${expected}`, () => {
    assert.equal(maskIp(input), expected);
  });
}

// Property tests.

const v4Int = fc.integer({ min: 0, max: 0xffffffff });
const part = fc.integer({ min: 0, max: 0xffff });
const parts8 = fc.array(part, { minLength: 8, maxLength: 8 });

/** Any legal, non-canonical spelling of eight groups: upper/lower case, optional leading zeros, no compression. */
const v6Spelling = fc
  .tuple(parts8, fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }), fc.boolean())
  .map(([ps, pads, upper]) => {
    const text = ps.map((p, i) => (pads[i] ? p.toString(16).padStart(4, '0') : p.toString(16))).join(':');
    return { ps, text: upper ? text.toUpperCase() : text };
  });

test('property: canonicalisation is idempotent for IPv4 addresses and blocks', () => {
  fc.assert(
    fc.property(v4Int, fc.integer({ min: 0, max: 32 }), fc.boolean(), (v, prefix, bare) => {
      const input = bare ? formatIPv4(v) : `${formatIPv4(v)}/${prefix}`;
      const once = canonicaliseEntry(input);
      assert.ok(once.ok, 'once.ok');
      assert.deepEqual(canonicaliseEntry(once.value), once);
    }),
  );
});

test('property: canonicalisation is idempotent for IPv6 and matches ipaddr.js RFC 5952 output', () => {
  fc.assert(
    fc.property(v6Spelling, fc.option(fc.integer({ min: 0, max: 128 })), ({ ps, text }, prefix) => {
      const mapped = ps.slice(0, 5).every((p) => p === 0) && ps[5] === 0xffff;
      const once = canonicaliseEntry(prefix === null ? text : `${text}/${prefix}`);
      if (mapped && prefix !== null) {
        assert.equal(once.ok, false);
        return;
      }
      assert.ok(once.ok, 'once.ok');
      assert.deepEqual(canonicaliseEntry(once.value), once);
      if (prefix === null && !mapped) {
        assert.equal(once.value, ipaddr.IPv6.parse(text).toRFC5952String());
      }
    }),
  );
});

test('property: IPv4 inside a canonicalised block matches, outside does not (plain and mapped callers)', () => {
  fc.assert(
    fc.property(v4Int, fc.integer({ min: 0, max: 32 }), v4Int, (base, prefix, probe) => {
      const c = canonicaliseEntry(`${formatIPv4(base)}/${prefix}`);
      assert.ok(c.ok, 'c.ok');
      const mask = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
      const net = (base & mask) >>> 0;
      const hostBits = (~mask >>> 0) as number;
      const inside = (net | (probe & hostBits)) >>> 0;
      assert.equal(isAllowed([c.value], formatIPv4(inside)), true);
      assert.equal(isAllowed([c.value], `::ffff:${formatIPv4(inside)}`), true);
      if (prefix > 0) {
        // Flip one bit inside the network part to land just outside the block.
        const bit = 31 - (probe % prefix);
        const outside = (inside ^ (1 << bit)) >>> 0;
        assert.equal(isAllowed([c.value], formatIPv4(outside)), false);
        assert.equal(isAllowed([c.value], `::ffff:${formatIPv4(outside)}`), false);
      }
    }),
  );
});

test('property: normaliseAddress agrees with ipaddr.js on arbitrary IPv6', () => {
  fc.assert(
    fc.property(v6Spelling, ({ text }) => {
      const addr = ipaddr.IPv6.parse(text);
      const expected = addr.isIPv4MappedAddress() ? addr.toIPv4Address().toString() : addr.toRFC5952String();
      assert.equal(normaliseAddress(text), expected);
    }),
  );
});
