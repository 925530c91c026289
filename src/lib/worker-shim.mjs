// Worker-thread entry: loads the task module, says it is ready, then answers each message with its
// handle() result. The pool hands out no task before the ready message, so module loading is never charged to one.
import { parentPort, workerData } from 'node:worker_threads';

// Only the sources need tsx: the build's modules are JavaScript, and loading tsx costs time and memory per worker.
if (workerData.module.endsWith('.ts')) (await import('tsx/esm/api')).register();
const mod = await import(workerData.module);
parentPort.on('message', async (input) => {
  try {
    const value = await mod.handle(input);
    parentPort.postMessage({ ok: true, value });
  } catch (err) {
    parentPort.postMessage({ ok: false, error: err instanceof Error ? err.message : String(err) });
  }
});
parentPort.postMessage({ ready: true });
