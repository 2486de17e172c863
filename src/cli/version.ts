import { readFileSync } from 'node:fs';

/** The package version, from the package.json above src/ (tests) or above dist/src/ (the built CLI). */
export function version(): string {
  const root = import.meta.url.includes('/dist/src/') ? '../../../' : '../../';
  const manifest = readFileSync(new URL(`${root}package.json`, import.meta.url), 'utf8');
  return (JSON.parse(manifest) as { version: string }).version;
}
