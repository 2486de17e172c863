/**
 * Namespaces: one folder of memories each, under one root. By convention an agent remembers in its own
 * (its name), a run that must start blank in a fresh one, and agents that share what they know in
 * `shared`. A name is a plain folder name, so none can reach outside the root.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';

export const SHARED_NAMESPACE = 'shared';

const NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/;

/** What is wrong with `name` as a namespace, or undefined. */
export function namespaceProblem(name: string): string | undefined {
  if (NAME.test(name) && !name.includes('..')) return undefined;
  return `"${name}" is not a namespace name: use up to 64 lowercase letters, digits, ".", "_" or "-", starting with a letter or digit`;
}

export function namespaceFolder(root: string, name: string): string {
  const problem = namespaceProblem(name);
  if (problem) throw new RangeError(problem);
  return join(root, name);
}

/** The namespace an agent remembers in by default: its name as a namespace name. */
export function agentNamespace(agentName: string): string {
  const slug = agentName
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[^a-z0-9]+|-+$/g, '')
    .replace(/\.{2,}/g, '.')
    .slice(0, 64);
  return slug === '' ? SHARED_NAMESPACE : slug;
}

/** The namespaces under `root`, sorted. */
export async function listNamespaces(root: string): Promise<string[]> {
  const entries = await readdir(root, { withFileTypes: true }).catch(() => []);
  return entries
    .filter((entry) => entry.isDirectory() && namespaceProblem(entry.name) === undefined)
    .map((entry) => entry.name)
    .sort();
}
