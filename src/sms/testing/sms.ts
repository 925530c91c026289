// What the SMS tests share: a signing link of the real length and its expiry.
export const URL_ = 'https://signet.example.com/sign/' + 'Ab3-_x'.repeat(7) + 'Q';
export const EXPIRES = Date.parse('2026-12-01T10:00:00Z');
