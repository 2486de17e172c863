import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { appendToFile } from '../../tools/append-to-file.js';
import type { Command } from '../../tools/command.js';
import { deleteFile } from '../../tools/delete-file.js';
import { readFile as readFileCommand } from '../../tools/read-file.js';
import { CommandRegistry, renderCommandList } from '../../tools/registry.js';
import { searchFiles } from '../../tools/search-files.js';
import { Workspace } from '../../tools/workspace.js';
import { writeToFile } from '../../tools/write-to-file.js';

let base: string;
let workspace: Workspace;

beforeEach(async () => {
  base = await mkdtemp(join(tmpdir(), 'meta-agent-file-commands-'));
  workspace = await Workspace.open(join(base, 'ws'));
});

afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

function run(command: Command, args: Record<string, unknown>) {
  return command.run(command.args.parse(args), { workspace, signal: new AbortController().signal });
}

/** The message `command` fails with; it must not show where the workspace is on the host. */
async function failure(command: Command, args: Record<string, unknown>): Promise<string> {
  const error = await run(command, args).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(Error);
  const { message } = error as Error;
  expect(message).not.toContain(base);
  return message;
}

it("lists the five commands as the seed's prompt does", () => {
  const list = renderCommandList(
    new CommandRegistry([writeToFile, readFileCommand, appendToFile, deleteFile, searchFiles]),
  );
  expect(list).toContain('1. Write to file: "write_to_file", args: "file": "<file>", "text": "<text>"');
  expect(list).toContain('2. Read file: "read_file", args: "file": "<file>"');
  expect(list).toContain('3. Append to file: "append_to_file", args: "file": "<file>", "text": "<text>"');
  expect(list).toContain('4. Delete file: "delete_file", args: "file": "<file>"');
  expect(list).toContain('5. Search Files: "search_files", args: "directory": "<directory>"');
});

describe('write_to_file', () => {
  it('writes the file, creating its folders, and reports the bytes and the file it wrote', async () => {
    const result = await run(writeToFile, { file: './notes//todo.txt', text: 'buy milk ✓\n' });
    expect(result).toEqual({
      output: 'Wrote 13 bytes to notes/todo.txt.',
      files: [{ path: 'notes/todo.txt', change: 'write' }],
    });
    expect(await readFile(join(workspace.root, 'notes', 'todo.txt'), 'utf8')).toBe('buy milk ✓\n');
  });

  it('replaces what the file held', async () => {
    await run(writeToFile, { file: 'a.txt', text: 'first, longer' });
    expect((await run(writeToFile, { file: 'a.txt', text: 'x' })).output).toBe('Wrote 1 byte to a.txt.');
    expect(await readFile(join(workspace.root, 'a.txt'), 'utf8')).toBe('x');
  });

  it('says a folder is a folder', async () => {
    await mkdir(join(workspace.root, 'notes'));
    expect(await failure(writeToFile, { file: 'notes', text: 'x' })).toBe(
      'Could not write "notes": it is a folder, not a file.',
    );
  });

  it('refuses a path out of the workspace with a message for the model', async () => {
    expect(await failure(writeToFile, { file: '../escape.txt', text: 'x' })).toBe(
      'The path "../escape.txt" contains "..", which is not allowed; files outside the workspace cannot be reached.',
    );
    await expect(stat(join(base, 'escape.txt'))).rejects.toThrow();
  });
});

describe('append_to_file', () => {
  it('creates the file, then adds to its end', async () => {
    expect(await run(appendToFile, { file: 'log.txt', text: 'one\n' })).toEqual({
      output: 'Appended 4 bytes to log.txt: "one\\n".',
      files: [{ path: 'log.txt', change: 'append' }],
    });
    await run(appendToFile, { file: 'log.txt', text: 'two\n' });
    expect(await readFile(join(workspace.root, 'log.txt'), 'utf8')).toBe('one\ntwo\n');
  });
});

describe('read_file', () => {
  it('returns the text of the file', async () => {
    await writeFile(join(workspace.root, 'plan.md'), '# Plan\n1. Search\n');
    expect(await run(readFileCommand, { file: 'plan.md' })).toEqual({
      output: '# Plan\n1. Search\n',
      files: [{ path: 'plan.md', change: 'read' }],
    });
  });

  it('says when the file is empty rather than returning nothing', async () => {
    await writeFile(join(workspace.root, 'empty.txt'), '');
    expect((await run(readFileCommand, { file: 'empty.txt' })).output).toBe('empty.txt is empty.');
  });

  it('says a missing file is missing', async () => {
    expect(await failure(readFileCommand, { file: 'nope.txt' })).toBe(
      'Could not read "nope.txt": there is no such file in the workspace.',
    );
  });

  it('says a folder is a folder', async () => {
    await mkdir(join(workspace.root, 'notes'));
    expect(await failure(readFileCommand, { file: 'notes' })).toBe(
      'Could not read "notes": it is a folder, not a file.',
    );
  });
});

describe('delete_file', () => {
  it('deletes the file and reports it', async () => {
    await run(writeToFile, { file: 'notes/todo.txt', text: 'x' });
    expect(await run(deleteFile, { file: 'notes/todo.txt' })).toEqual({
      output: 'Deleted notes/todo.txt.',
      files: [{ path: 'notes/todo.txt', change: 'delete' }],
    });
    await expect(stat(join(workspace.root, 'notes', 'todo.txt'))).rejects.toThrow();
  });

  it('refuses to delete a folder, which stays', async () => {
    await run(writeToFile, { file: 'notes/todo.txt', text: 'x' });
    expect(await failure(deleteFile, { file: 'notes' })).toBe(
      'Could not delete "notes": it is a folder, and only files can be deleted.',
    );
    expect(await readFile(join(workspace.root, 'notes', 'todo.txt'), 'utf8')).toBe('x');
  });

  it('says a missing file is missing', async () => {
    expect(await failure(deleteFile, { file: 'gone.txt' })).toBe(
      'Could not delete "gone.txt": there is no such file in the workspace.',
    );
  });
});

describe('search_files', () => {
  it('lists the files under a folder, one a line, relative to the workspace', async () => {
    for (const file of ['notes/b.txt', 'notes/a/deep.txt', 'top.txt'])
      await run(writeToFile, { file, text: 'x' });
    expect(await run(searchFiles, { directory: 'notes' })).toEqual({
      output: 'notes/a/deep.txt\nnotes/b.txt',
      files: [{ path: 'notes', change: 'list' }],
    });
    expect((await run(searchFiles, { directory: '.' })).output).toBe(
      'notes/a/deep.txt\nnotes/b.txt\ntop.txt',
    );
  });

  it('says when there are no files', async () => {
    expect(await run(searchFiles, { directory: '' })).toEqual({
      output: 'There are no files in the workspace.',
      files: [{ path: '.', change: 'list' }],
    });
  });

  it('says a file is not a folder, and a missing folder is missing', async () => {
    await run(writeToFile, { file: 'top.txt', text: 'x' });
    expect(await failure(searchFiles, { directory: 'top.txt' })).toBe(
      'Could not list "top.txt": it is a file, not a folder.',
    );
    expect(await failure(searchFiles, { directory: 'nowhere' })).toBe(
      'Could not list "nowhere": there is no such folder in the workspace.',
    );
  });
});
