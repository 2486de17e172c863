import { readFileSync } from 'node:fs';

/** The package version, read once from package.json next to dist/ or src/. */
export function version(): string {
  const url = new URL('../../../package.json', import.meta.url);
  try {
    return (JSON.parse(readFileSync(url, 'utf8')) as { version: string }).version;
  } catch {
    return (
      JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
    ).version;
  }
}
