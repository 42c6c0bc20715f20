#!/usr/bin/env node
// `metamodel`: the service's command-line client. In the service's checkout it runs the TypeScript sources through
// tsx (no build needed); installed as a package (@metamodel/cli), the JavaScript built into dist/.
import { existsSync } from 'node:fs';

const sources = new URL('../src/main.ts', import.meta.url);
if (existsSync(sources)) {
  const { register } = await import('tsx/esm/api');
  register();
  const { runCli } = await import(sources.href);
  await runCli();
} else {
  const { runCli } = await import('../dist/main.js');
  await runCli();
}
