// Child process for the killed-worker test: one dispatcher pass against a SQLite file, to be SIGKILLed mid-request.
// argv: <sqlite file> <clock ms> <worker id>
import { openDb } from '../../db/db.js';
import { ManualClock } from '../../lib/clock.js';
import { createDispatcher } from '../dispatcher.js';

const [file, clockMs, workerId] = process.argv.slice(2);
if (!file || !clockMs || !workerId) throw new Error('usage: worker-child.ts <sqlite file> <clock ms> <worker id>');
const db = await openDb(`sqlite:${file}`, { migrate: false });
const clock = new ManualClock(Number(clockMs));
const dispatcher = createDispatcher({ db, clock, workerId, allowPrivateNetwork: true });
await dispatcher.runOnce();
await dispatcher.stop();
await db.close();
