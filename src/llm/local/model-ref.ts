/**
 * Which local model to run: a GGUF file on the Hugging Face hub (`hf:owner/name/file.gguf`) or one on
 * disk (its path). A reference comes from a flag, a graph file or a cache manifest, so it is untrusted:
 * each part of an hf reference is a plain name, which keeps the cache path it maps to (cache-dir.ts)
 * inside the cache and the URL it maps to (download.ts) on the repository it names.
 */
import { resolve } from 'node:path';
import { UserError } from '../../errors.js';

/**
 * A model reference. `repo` is `owner/name`; `file` is the file's path in the repository (it may have
 * folders); `path` is absolute.
 */
export type ModelRef = { kind: 'hf'; repo: string; file: string } | { kind: 'file'; path: string };

/** A reference to a file on the Hugging Face hub. */
export type HfModelRef = Extract<ModelRef, { kind: 'hf' }>;

/** The model used when none is named: small enough to download in minutes and run on a laptop CPU. */
export const DEFAULT_LOCAL_MODEL = {
  ref: 'hf:Qwen/Qwen2.5-1.5B-Instruct-GGUF/qwen2.5-1.5b-instruct-q4_k_m.gguf',
  name: 'Qwen2.5 1.5B Instruct (Q4_K_M)',
  approximateSize: 'about 1.1 GB',
} as const;

/** ` (about 1.1 GB)` for the default model, whose size is known before asking the hub; else nothing. */
export function sizeNote(ref: string): string {
  return ref === DEFAULT_LOCAL_MODEL.ref ? ` (${DEFAULT_LOCAL_MODEL.approximateSize})` : '';
}

const HF_PREFIX = 'hf:';

/** A part of an hf reference: what the hub allows in names, short enough for any file system. */
const SEGMENT = /^[A-Za-z0-9._-]{1,200}$/;

/**
 * Reads a reference: `hf:owner/name/file.gguf` (or `hf:owner/name/folder/file.gguf`), else the path of a
 * file, resolved against `cwd`. A malformed hf reference, or a URL, is a UserError (exit 2).
 */
export function parseModelRef(text: string, cwd: string = process.cwd()): ModelRef {
  if (text.startsWith(HF_PREFIX)) return parseHfRef(text);
  if (text.trim() === '' || text.includes('\0')) throw badRef(text, 'it is empty or not a path');
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) throw badRef(text, 'a URL cannot be downloaded as is');
  return { kind: 'file', path: resolve(cwd, text) };
}

/** The text of a reference, as parseModelRef reads it. */
export function formatModelRef(ref: ModelRef): string {
  return ref.kind === 'hf' ? `${HF_PREFIX}${ref.repo}/${ref.file}` : ref.path;
}

/** `ref` checked as parseModelRef checks what it reads: for a reference built by hand. */
export function checkedHfRef(ref: HfModelRef): HfModelRef {
  return parseHfRef(formatModelRef(ref));
}

function parseHfRef(text: string): HfModelRef {
  const parts = text.slice(HF_PREFIX.length).split('/');
  const [owner, name, ...file] = parts;
  if (owner === undefined || name === undefined || file.length === 0) {
    throw badRef(text, 'it needs an owner, a repository and a file');
  }
  const wrong = parts.find((part) => !SEGMENT.test(part) || part === '.' || part === '..');
  if (wrong !== undefined) {
    throw badRef(text, `"${wrong}" is not a name (letters, digits, ".", "_" and "-" only)`);
  }
  if (!/.\.gguf$/.test(file.at(-1) ?? '')) throw badRef(text, 'the file must be a .gguf file');
  return { kind: 'hf', repo: `${owner}/${name}`, file: file.join('/') };
}

function badRef(text: string, why: string): UserError {
  return new UserError(
    `"${text}" is not a model reference: ${why}`,
    2,
    `name a file on Hugging Face as ${DEFAULT_LOCAL_MODEL.ref}, or give the path of a .gguf file`,
  );
}
