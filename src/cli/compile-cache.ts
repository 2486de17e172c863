/**
 * Node's compile cache for the CLI's modules and packages: V8's code for each file, kept on disk, so a
 * command starts without compiling its few hundred modules again (bench/startup.bench.ts measures it).
 * It goes in the user's cache folder, not the shared temporary one, where another user could plant code.
 * Nothing here fails a command: a folder that cannot be written only leaves the cache off.
 */
import { enableCompileCache } from 'node:module';
import { join } from 'node:path';
import { localCacheDir } from '../llm/local/cache-dir.js';

/**
 * Turns the cache on for every module loaded from now on, unless NODE_COMPILE_CACHE (a folder of the
 * user's choosing, which Node has already used) or NODE_DISABLE_COMPILE_CACHE decides.
 */
export function startCompileCache(env: NodeJS.ProcessEnv = process.env): void {
  if (env.NODE_COMPILE_CACHE || env.NODE_DISABLE_COMPILE_CACHE) return;
  enableCompileCache(join(localCacheDir(env), 'compile'));
}
