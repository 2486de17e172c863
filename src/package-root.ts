/**
 * The folder of this package, found by walking up from this module to meta-agent's package.json: it
 * sits at a different depth in src/, in dist/src/ and in the bundled CLI (dist/cli/).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package folder: where package.json, meta/ and schema/ are. */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (
      existsSync(manifest) &&
      (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'meta-agent-autograms'
    )
      return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error('meta-agent: its package.json is not found above this module');
    dir = parent;
  }
}
