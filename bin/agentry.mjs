#!/usr/bin/env node
// Runs the TypeScript sources directly through tsx: one artefact to ship, no build step to forget.
import { register } from 'tsx/esm/api';

register();
await import('../src/main.ts');
