#!/usr/bin/env node
// `metamodel`: the service's command-line client. Runs the TypeScript sources through tsx (no build needed).
import { register } from 'tsx/esm/api';

register();
const { runCli } = await import('../src/main.ts');
await runCli();
