// The test run's one Chromium (scripts/test.sh starts it): a Playwright browser server on loopback whose endpoint
// is written to the file named by the first argument; launchChromium (browser.ts) connects to it and works in a
// fresh browser context. It stops, closing Chromium, on SIGTERM or SIGINT.
import fs from 'node:fs';
import { chromium } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS } from './browser.js';

const endpointFile = process.argv[2];
if (!endpointFile) throw new Error('usage: browser-server.ts ENDPOINT_FILE');
const server = await chromium.launchServer({ executablePath: CHROMIUM, args: [...CHROMIUM_ARGS], host: '127.0.0.1' });
// Written whole, then renamed: the reader never sees half an endpoint.
fs.writeFileSync(`${endpointFile}.tmp`, server.wsEndpoint());
fs.renameSync(`${endpointFile}.tmp`, endpointFile);
const stop = () => void server.close().finally(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
