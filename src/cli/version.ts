import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../package-root.js';

/** The package version, from its package.json. */
export function version(): string {
  const manifest = readFileSync(join(packageRoot(), 'package.json'), 'utf8');
  return (JSON.parse(manifest) as { version: string }).version;
}
