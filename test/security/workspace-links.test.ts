/**
 * Hard links in the workspace. The jail checks paths and symlinks, but a hard link is a name for the
 * same file as one outside (a pnpm store's file, a config the user linked in): writing through it
 * changes the file outside. `write_to_file` renames a new file over the link; `append_to_file` must not
 * append through it either, but to a copy that replaces the link, so the outside file keeps its text.
 */
import { link, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { appendToFile } from '../../tools/append-to-file.js';
import type { Command } from '../../tools/command.js';
import { Workspace } from '../../tools/workspace.js';
import { writeToFile } from '../../tools/write-to-file.js';

let base: string;
let outside: string;
let workspace: Workspace;

beforeEach(async () => {
  // One temporary folder for both, so they are on one file system and a hard link can join them.
  base = await mkdtemp(join(tmpdir(), 'meta-agent-workspace-links-'));
  outside = join(base, 'outside');
  await mkdir(outside);
  await writeFile(join(outside, 'secret.txt'), 'outside text\n', { mode: 0o640 });
  workspace = await Workspace.open(join(base, 'ws'));
});

afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

function run(command: Command, args: Record<string, unknown>) {
  return command.run(command.args.parse(args), { workspace, signal: new AbortController().signal });
}

async function outsideUntouched(): Promise<void> {
  expect(await readFile(join(outside, 'secret.txt'), 'utf8')).toBe('outside text\n');
}

describe('a hard link in the workspace to a file outside', () => {
  beforeEach(async () => {
    await link(join(outside, 'secret.txt'), join(workspace.root, 'linked.txt'));
  });

  it('append_to_file leaves the outside file as it was, and appends to the workspace file', async () => {
    const result = await run(appendToFile, { file: 'linked.txt', text: 'pwned\n' });
    expect(result.output).toContain('Appended 6 bytes to linked.txt');
    await outsideUntouched();
    expect(await workspace.read('linked.txt')).toBe('outside text\npwned\n');
    // The workspace's name is now a file of its own, with the permissions the file had.
    const inside = await stat(join(workspace.root, 'linked.txt'));
    expect(inside.nlink).toBe(1);
    expect(inside.mode & 0o777).toBe(0o640);
    expect((await stat(join(outside, 'secret.txt'))).nlink).toBe(1);
  });

  it('a second append goes on appending to the workspace copy', async () => {
    await run(appendToFile, { file: 'linked.txt', text: 'one\n' });
    await run(appendToFile, { file: 'linked.txt', text: 'two\n' });
    await outsideUntouched();
    expect(await workspace.read('linked.txt')).toBe('outside text\none\ntwo\n');
  });

  it('write_to_file replaces the link, leaving the outside file as it was', async () => {
    await run(writeToFile, { file: 'linked.txt', text: 'pwned\n' });
    await outsideUntouched();
    expect(await workspace.read('linked.txt')).toBe('pwned\n');
  });

  it('leaves no temporary file behind', async () => {
    await run(appendToFile, { file: 'linked.txt', text: 'x' });
    expect(await workspace.list('.')).toEqual(['linked.txt']);
  });
});

describe('a file with one link', () => {
  it('is appended to in place, as before', async () => {
    await workspace.write('notes.txt', 'a\n');
    const before = await stat(join(workspace.root, 'notes.txt'));
    await run(appendToFile, { file: 'notes.txt', text: 'b\n' });
    expect(await workspace.read('notes.txt')).toBe('a\nb\n');
    expect((await stat(join(workspace.root, 'notes.txt'))).ino).toBe(before.ino);
  });
});
