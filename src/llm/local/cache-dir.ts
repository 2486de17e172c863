/**
 * Where downloaded models are kept. Models are large and can always be fetched again, so they go where
 * each platform keeps caches (what backups and sync tools skip), not with a user's data; one variable
 * moves the whole cache, for a disk with more room or a shared folder.
 */
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { checkedHfRef, type HfModelRef } from './model-ref.js';

/**
 * The cache folder: META_AGENT_CACHE_DIR when set, else $XDG_CACHE_HOME/meta-agent (the XDG spec
 * ignores a relative value, and so do we), else the platform's own: ~/.cache/meta-agent on Linux,
 * ~/Library/Caches/meta-agent on macOS, %LOCALAPPDATA%\meta-agent\Cache on Windows.
 */
export function localCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.META_AGENT_CACHE_DIR) return resolve(env.META_AGENT_CACHE_DIR);
  if (env.XDG_CACHE_HOME && isAbsolute(env.XDG_CACHE_HOME)) return join(env.XDG_CACHE_HOME, 'meta-agent');
  if (process.platform === 'darwin') return join(homedir(), 'Library', 'Caches', 'meta-agent');
  if (process.platform === 'win32') {
    return join(env.LOCALAPPDATA || join(homedir(), 'AppData', 'Local'), 'meta-agent', 'Cache');
  }
  return join(homedir(), '.cache', 'meta-agent');
}

/** The folder of downloaded models, inside the cache. */
export function modelsDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(localCacheDir(env), 'models');
}

/**
 * Where a Hugging Face model is kept: MODELS/hf/OWNER/NAME/FILE. The reference is checked again here, so
 * one built by hand (not parsed) cannot name a path outside the models folder.
 */
export function hfModelPath(ref: HfModelRef, env: NodeJS.ProcessEnv = process.env): string {
  const checked = checkedHfRef(ref);
  return join(modelsDir(env), 'hf', ...checked.repo.split('/'), ...checked.file.split('/'));
}
