#!/usr/bin/env node
// Entry point of the `dplab` CLI. TypeScript sources run through tsx, so there is no build
// step between editing the runner and using it.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('./cli.ts');
process.exitCode = await main(process.argv.slice(2));
