import { randomBytes } from 'node:crypto';

export type IdPrefix =
  | 'ws'
  | 'key'
  | 'hook'
  | 'doc'
  | 'sr'
  | 'tpl'
  | 'tin'
  | 'del'
  | 'att'
  | 'aud'
  | 'ses'
  | 'usr'
  | 'cpy'
  | 'vc'
  | 'qes'
  | 'bulk'
  | 'drf';

/** Prefixed random id: `hook_` + 24 lowercase hex (96 bits). */
export const newId = (prefix: IdPrefix): string => `${prefix}_${randomBytes(12).toString('hex')}`;

/** Event ids are fixed by the spec: `evt_` + 32 hex. */
export const newEventId = (): string => `evt_${randomBytes(16).toString('hex')}`;
