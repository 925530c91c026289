// CPU figures read from Linux's /proc, for the benches that count every process's share (NaN elsewhere).
import fs from 'node:fs';

/** CPU ms a process has used: user + system ticks. */
export function cpuMsOf(pid: number | undefined): number {
  try {
    const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const [utime, stime] = f
      .slice(f.lastIndexOf(')') + 2)
      .split(' ')
      .slice(11, 13)
      .map(Number);
    return ((utime! + stime!) * 1000) / 100;
  } catch {
    return NaN;
  }
}

export type MachineTicks = { idle: number; total: number };

/** The machine's idle and total ticks so far. */
export function machineTicks(): MachineTicks {
  try {
    const cells = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    return { idle: cells[3]! + cells[4]!, total: cells.reduce((a, b) => a + b, 0) };
  } catch {
    return { idle: NaN, total: NaN };
  }
}

/** The share of the machine idle since `t0`: a side with idle CPU was bound by something else. */
export const idleShare = (t0: MachineTicks): number => {
  const t = machineTicks();
  return (t.idle - t0.idle) / (t.total - t0.total);
};
