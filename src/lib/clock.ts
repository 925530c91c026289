// Time is injected everywhere: domain code asks a Clock, never Date.now(), so tests move time instead of sleeping.
export type Clock = { now(): number };

export const systemClock: Clock = { now: () => Date.now() };

export class ManualClock implements Clock {
  private t: number;
  constructor(start: number | Date = Date.now()) {
    this.t = typeof start === 'number' ? start : start.getTime();
  }
  now(): number {
    return this.t;
  }
  advance(ms: number): void {
    this.t += ms;
  }
  set(t: number | Date): void {
    this.t = typeof t === 'number' ? t : t.getTime();
  }
}

export const iso = (ms: number): string => new Date(ms).toISOString();
