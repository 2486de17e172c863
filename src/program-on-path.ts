/**
 * Where a program is on PATH, as a shell finds it, except that relative entries (`.`, an empty one) are
 * skipped: what they lead to depends on the folder meta-agent was started in, which may be anyone's.
 */
import { accessSync, constants } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';

/** The absolute path of the executable `name` in the first PATH folder that has one. */
export function programOnPath(name: string, path: string = process.env.PATH ?? ''): string | undefined {
  for (const folder of path.split(delimiter)) {
    if (!isAbsolute(folder)) continue;
    const file = join(folder, name);
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // Not here: the next folder.
    }
  }
  return undefined;
}
