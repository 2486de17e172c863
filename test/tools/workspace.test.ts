import {
  chmod,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  readlink,
  rm,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LIST_LIMIT, LIST_NOTE, Workspace } from '../../tools/workspace.js';
import { JailError } from '../../tools/workspace-path.js';

let base: string;
let outside: string;
let workspace: Workspace;

beforeEach(async () => {
  base = await mkdtemp(join(tmpdir(), 'meta-agent-workspace-'));
  outside = join(base, 'outside');
  await mkdir(outside);
  await writeFile(join(outside, 'secret.txt'), 'secret');
  workspace = await Workspace.open(join(base, 'ws'));
});

afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

/** Expects `attempt` to be refused by the jail with a message holding `words` and no host path. */
async function refused(attempt: Promise<unknown>, ...words: string[]): Promise<string> {
  const error = await attempt.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(JailError);
  const { message, path } = error as JailError;
  for (const word of words) expect(message).toContain(word);
  // The model's own path is said back to it; nothing else of the host is.
  if (!path.includes(base)) expect(message).not.toContain(base);
  return message;
}

/** The folder outside the workspace still holds only its secret, unchanged. */
async function outsideUntouched(): Promise<void> {
  expect(await readdir(outside)).toEqual(['secret.txt']);
  expect(await readFile(join(outside, 'secret.txt'), 'utf8')).toBe('secret');
}

describe('opening a workspace', () => {
  it('creates the folder and keeps its real path as the root', async () => {
    await symlink(join(base, 'ws'), join(base, 'alias'));
    const opened = await Workspace.open(join(base, 'alias'));
    expect(opened.root).toBe(workspace.root);
    const fresh = await Workspace.open(join(base, 'new', 'deep'));
    expect((await stat(fresh.root)).isDirectory()).toBe(true);
  });
});

describe('paths that climb out with ".."', () => {
  it('refuses ".." alone', async () => {
    await refused(workspace.read('..'), '".."', 'outside the workspace cannot be reached');
    await refused(workspace.list('..'), '".."');
  });

  it('refuses "a/../../outside/secret.txt", which would climb out, and changes nothing there', async () => {
    await refused(workspace.write('a/../../outside/secret.txt', 'pwned'), '".."');
    await outsideUntouched();
  });

  it('refuses "a/../notes.txt" though it stays inside, and says what to write instead', async () => {
    await refused(workspace.read('a/../notes.txt'), 'write "notes.txt" instead');
    await refused(workspace.list('a/..'), '".."');
  });
});

describe('paths that are not relative to the workspace', () => {
  it('refuses absolute paths, even one to a file inside the workspace', async () => {
    await workspace.write('notes.txt', 'hi');
    await refused(workspace.read(join(workspace.root, 'notes.txt')), 'is absolute');
    await refused(workspace.write(join(outside, 'new.txt'), 'x'), 'is absolute');
    await refused(workspace.read('/etc/passwd'), 'is absolute');
    await outsideUntouched();
  });

  it.each(['C:\\Windows\\win.ini', 'C:/x', 'c:x', '\\\\server\\share\\x', 'a\\..\\..\\x'])(
    'refuses the Windows-style path %j',
    async (path) => {
      await refused(workspace.write(path, 'x'));
      expect(await readdir(workspace.root)).toEqual([]);
    },
  );

  it.each(['~', '~/x', '~root/.ssh/id_rsa'])('refuses the home-folder path %j', async (path) => {
    await refused(workspace.read(path), '"~"');
  });

  it('refuses an empty path, or one naming the root, as a file', async () => {
    await refused(workspace.read(''), 'is empty');
    await refused(workspace.write('.', 'x'), 'the workspace itself');
    await refused(workspace.remove('./'), 'the workspace itself');
  });

  it('refuses a path over 4096 bytes without repeating it whole', async () => {
    const long = `${'a/'.repeat(2100)}x`;
    const message = await refused(workspace.write(long, 'x'), '4201 bytes long');
    expect(message.length).toBeLessThan(300);
  });
});

describe('paths with characters that hide what they are', () => {
  it('refuses a NUL byte before anything else', async () => {
    await refused(workspace.read('notes.txt\0.png'), 'NUL byte');
    await refused(workspace.write('../\0', 'x'), 'NUL byte');
  });

  it.each(['a\nb', 'a\rb', '\x1b[31mred', 'a\x7fb', 'a\u0085b', 'tab\there'])(
    'refuses the control character in %j',
    async (path) => {
      await refused(workspace.write(path, 'x'), 'control character U+00');
    },
  );

  it.each([
    ['DIVISION SLASH', '..\u2215outside\u2215secret.txt', 'U+2215'],
    ['FRACTION SLASH', '..\u2044x', 'U+2044'],
    ['FULLWIDTH SOLIDUS', '..\uff0fx', 'U+FF0F'],
    ['BIG SOLIDUS', 'a\u29f8b', 'U+29F8'],
    ['FULLWIDTH REVERSE SOLIDUS', '..\uff3cx', 'U+FF3C'],
    ['SET MINUS', 'a\u2216b', 'U+2216'],
    ['ONE DOT LEADER', '\u2024\u2024/x', 'U+2024'],
    ['TWO DOT LEADER', '\u2025/x', 'U+2025'],
    ['FULLWIDTH FULL STOP', '\uff0e\uff0e/x', 'U+FF0E'],
    ['SMALL FULL STOP', '\ufe52\ufe52/x', 'U+FE52'],
    ['SYRIAC SUPRALINEAR FULL STOP', 'notes\u0701txt', 'U+0701'],
  ])('refuses the look-alike %s', async (_name, path, code) => {
    await refused(workspace.write(path, 'x'), code, 'plain characters');
    expect(await readdir(workspace.root)).toEqual([]);
  });

  it('refuses letters not in normal form, and accepts the same name written normally', async () => {
    await refused(workspace.write('cafe\u0301.txt', 'x'), 'normal form');
    await workspace.write('caf\u00e9.txt', 'x');
    expect(await workspace.read('caf\u00e9.txt')).toBe('x');
  });

  it.each(['\u200bnotes.txt', 'a\u200db', 'invoice\u202etxt.exe', 'a\u2066b', '\ufeffa', 'a\u200fb'])(
    'refuses the invisible or bidi character in %j, and shows it escaped',
    async (path) => {
      const message = await refused(workspace.write(path, 'x'), 'invisible or text-direction');
      expect(message).toMatch(/\\u[0-9a-f]{4}/);
      expect(message).not.toMatch(/[\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/);
    },
  );
});

describe('symbolic links', () => {
  it('refuses a link to a file outside, for every operation', async () => {
    await symlink(join(outside, 'secret.txt'), join(workspace.root, 'leak.txt'));
    await refused(workspace.read('leak.txt'), 'leads outside the workspace');
    await refused(workspace.write('leak.txt', 'pwned'), 'leads outside the workspace');
    await refused(workspace.append('leak.txt', 'pwned'), 'leads outside the workspace');
    await refused(workspace.remove('leak.txt'), 'leads outside the workspace');
    await outsideUntouched();
  });

  it('refuses reading, writing and listing through a link to a folder outside', async () => {
    await symlink(outside, join(workspace.root, 'out'));
    await refused(workspace.read('out/secret.txt'), '"out"', 'leads outside the workspace');
    await refused(workspace.write('out/new.txt', 'x'), 'leads outside the workspace');
    await refused(workspace.write('out/deeper/new.txt', 'x'), 'leads outside the workspace');
    await refused(workspace.list('out'), 'leads outside the workspace');
    await workspace.write('mine.txt', 'x');
    expect(await workspace.list('.')).toEqual(['mine.txt']);
    await outsideUntouched();
  });

  it('refuses a chain of links that ends outside', async () => {
    await symlink('../outside/secret.txt', join(workspace.root, 'two'));
    await symlink('two', join(workspace.root, 'one'));
    await refused(workspace.read('one'), 'leads outside the workspace');
    await refused(workspace.write('one', 'pwned'), 'leads outside the workspace');
    await outsideUntouched();
  });

  it('refuses a link that leads nowhere', async () => {
    await symlink(join(outside, 'missing.txt'), join(workspace.root, 'dangling'));
    await refused(workspace.write('dangling', 'x'), 'leads nowhere');
    await outsideUntouched();
  });

  it('follows a link inside that points inside: writes reach its file and the link stays a link', async () => {
    await workspace.write('real/data.txt', 'one');
    await symlink('real/data.txt', join(workspace.root, 'alias.txt'));
    await symlink('real', join(workspace.root, 'shortcut'));
    expect(await workspace.read('alias.txt')).toBe('one');
    await workspace.write('alias.txt', 'two');
    expect(await workspace.read('shortcut/data.txt')).toBe('two');
    expect(await readlink(join(workspace.root, 'alias.txt'))).toBe('real/data.txt');
    expect(await workspace.list('.')).toEqual(['alias.txt', 'real/data.txt']);
    await workspace.remove('alias.txt');
    expect(await workspace.read('real/data.txt')).toBe('two');
    await expect(lstat(join(workspace.root, 'alias.txt'))).rejects.toThrow();
  });
});

describe('the reserved .meta-agent folder', () => {
  beforeEach(async () => {
    await mkdir(join(workspace.root, '.meta-agent'));
    await writeFile(join(workspace.root, '.meta-agent', 'allow.json'), '{"commands":[]}');
  });

  async function stateUntouched(): Promise<void> {
    expect(await readFile(join(workspace.root, '.meta-agent', 'allow.json'), 'utf8')).toBe('{"commands":[]}');
  }

  it('refuses reading, writing, appending, deleting and listing in it', async () => {
    await refused(workspace.read('.meta-agent/allow.json'), 'is in .meta-agent');
    await refused(workspace.write('.meta-agent/allow.json', '{"commands":["x"]}'), 'is in .meta-agent');
    await refused(workspace.append('./.meta-agent/allow.json', 'x'), 'is in .meta-agent');
    await refused(workspace.remove('.meta-agent/allow.json'), 'is in .meta-agent');
    await refused(workspace.list('.meta-agent'), 'is in .meta-agent');
    await refused(workspace.write('.META-AGENT/allow.json', 'x'), 'is in .meta-agent');
    await stateUntouched();
  });

  it('refuses reaching it through a link', async () => {
    await symlink('.meta-agent', join(workspace.root, 'state'));
    await refused(workspace.write('state/allow.json', 'x'), 'leads into .meta-agent');
    await stateUntouched();
  });

  it('leaves it out of the list of the workspace', async () => {
    await workspace.write('notes.txt', 'x');
    expect(await workspace.list('.')).toEqual(['notes.txt']);
  });
});

it('goes on working after a refusal', async () => {
  await refused(workspace.write('../escape.txt', 'x'));
  await workspace.write('notes.txt', 'still here');
  expect(await workspace.read('notes.txt')).toBe('still here');
});

describe('reading and writing', () => {
  it('replaces a file atomically, leaving no temporary file and keeping its permissions', async () => {
    await workspace.write('notes.txt', 'a first, longer text');
    await chmod(join(workspace.root, 'notes.txt'), 0o600);
    await workspace.write('notes.txt', 'second');
    expect(await workspace.read('notes.txt')).toBe('second');
    expect(await readdir(workspace.root)).toEqual(['notes.txt']);
    expect((await stat(join(workspace.root, 'notes.txt'))).mode & 0o777).toBe(0o600);
  });

  it('creates the folders a new file needs, and normalizes "./" and "//"', async () => {
    await workspace.write('./reports//2024/summary.md', '# Summary');
    expect(await readFile(join(workspace.root, 'reports', '2024', 'summary.md'), 'utf8')).toBe('# Summary');
  });

  it('appends, creating the file when missing', async () => {
    await workspace.append('log/run.txt', 'one\n');
    await workspace.append('log/run.txt', 'two\n');
    expect(await workspace.read('log/run.txt')).toBe('one\ntwo\n');
  });

  it('refuses to read a file over 1 MiB, saying its size', async () => {
    await writeFile(join(workspace.root, 'big.log'), 'x'.repeat(1024 * 1024 + 1));
    await expect(workspace.read('big.log')).rejects.toThrow(
      'Could not read "big.log": it is 1,048,577 bytes (1.0 MiB), and files over 1 MiB cannot be read.',
    );
  });

  it('refuses to read a binary file', async () => {
    await writeFile(join(workspace.root, 'image.png'), Buffer.from([0x89, 0x50, 0x00, 0x01]));
    await expect(workspace.read('image.png')).rejects.toThrow('it is a binary file, not text');
  });

  it('says which part of a path is a file rather than a folder', async () => {
    await workspace.write('notes.txt', 'x');
    await expect(workspace.write('notes.txt/more.txt', 'y')).rejects.toThrow(
      'Could not write "notes.txt/more.txt": "notes.txt" is a file, not a folder.',
    );
  });
});

describe('listing', () => {
  it('lists files recursively, sorted folder by folder, with "." and "" meaning the root', async () => {
    for (const file of ['b.txt', 'a/z.txt', 'a/b/c.txt', 'a.txt']) await workspace.write(file, 'x');
    await mkdir(join(workspace.root, 'empty'));
    const all = ['a/b/c.txt', 'a/z.txt', 'a.txt', 'b.txt'];
    expect(await workspace.list('.')).toEqual(all);
    expect(await workspace.list('')).toEqual(all);
    expect(await workspace.list('a')).toEqual(['a/b/c.txt', 'a/z.txt']);
  });

  it(`stops at ${LIST_LIMIT} files and says there are more`, async () => {
    await mkdir(join(workspace.root, 'many'));
    for (let i = 0; i < LIST_LIMIT + 5; i++)
      await writeFile(join(workspace.root, 'many', `${String(i).padStart(4, '0')}.txt`), '');
    const listed = await workspace.list('many');
    expect(listed).toHaveLength(LIST_LIMIT + 1);
    expect(listed[0]).toBe('many/0000.txt');
    expect(listed[LIST_LIMIT - 1]).toBe('many/0999.txt');
    expect(listed[LIST_LIMIT]).toBe(LIST_NOTE);
  });
});
