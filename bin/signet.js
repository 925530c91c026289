#!/usr/bin/env node
// The `signet` command. TypeScript sources run through tsx, registered relative to this file so it works from anywhere.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
