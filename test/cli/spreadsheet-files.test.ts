import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { closedUrl } from '../support/openai-server.js';
import { runCli } from '../support/run-cli.js';

/**
 * Spreadsheets as spreadsheet programs save them: semicolons where the comma is the decimal sign,
 * tabs and UTF-16 from Excel's "Unicode Text", Windows-1252 from Excel's plain "CSV" on Windows.
 */
const ROWS = [
  [
    'Name',
    'Action',
    'Instruction',
    'Transitions',
    'Transition Question',
    'Transition Choice A',
    'Transition Choice B',
  ],
  ['start', 'chat_exact', 'Bonjour, ça va?', 'start,next', 'Again; or on?', 'again', 'on'],
  ['next', 'chat_exact', 'Très bien', 'start', '', '', ''],
  ['price(n)', 'code', "'Café: ' + str(n) + ' €'", 'return', '', '', ''],
];

let dir: string;
let env: Record<string, string>;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'meta-agent-spreadsheets-'));
  // No model server anywhere: these graphs need none, and no test may probe for a real one.
  env = { META_AGENT_PROBE_URLS: await closedUrl() };
});

/** Writes the rows with `delimiter` between cells, quoting a cell that holds it, as spreadsheets do. */
function spreadsheet(name: string, delimiter: string, encode: (text: string) => Uint8Array): string {
  const quote = (cell: string) => (cell.includes(delimiter) ? `"${cell}"` : cell);
  const text = ROWS.map((row) => row.map(quote).join(delimiter)).join('\r\n') + '\r\n';
  const path = join(dir, name);
  writeFileSync(path, encode(text));
  return path;
}

const utf8 = (text: string) => Buffer.from(text, 'utf8');
const utf16WithBom = (text: string) => Buffer.from(`\ufeff${text}`, 'utf16le');
/** Windows-1252 for the letters these rows use (é, ç, è and €); Node has no encoder for it. */
const windows1252 = (text: string) =>
  Buffer.from([...text].map((char) => ({ '€': 0x80 })[char] ?? char.charCodeAt(0)));

const run = (...args: string[]) => runCli(args, { env });

describe('spreadsheets from spreadsheet programs', () => {
  it('reads a semicolon-separated spreadsheet, commas in its cells kept as text and lists', async () => {
    const path = spreadsheet('semicolons.csv', ';', utf8);
    expect((await run('validate', path)).stdout).toBe(`${path}: 3 nodes, 0 errors, 0 warnings\n`);
    const shown = await run('show', path);
    expect(shown.stdout).toContain(
      '    Bonjour, ça va?\n    ? Again; or on?\n    → start  [again]\n    → next  [on]',
    );
    expect(await run('call', path, 'price(3)')).toEqual({ code: 0, stdout: '"Café: 3 €"\n', stderr: '' });
  });

  it('reads a tab-separated UTF-16 spreadsheet (Excel\'s "Unicode Text")', async () => {
    const path = spreadsheet('unicode-text.csv', '\t', utf16WithBom);
    expect((await run('validate', path)).stdout).toBe(`${path}: 3 nodes, 0 errors, 0 warnings\n`);
    expect(await run('call', path, 'price(4)')).toEqual({ code: 0, stdout: '"Café: 4 €"\n', stderr: '' });
  });

  it('reads a Windows-1252 spreadsheet with its accents and says that it guessed the encoding', async () => {
    const path = spreadsheet('windows.csv', ',', windows1252);
    const warning = `${path}: not UTF-8, so read as Windows-1252 (Excel's plain "CSV" on Windows); if letters look wrong, save it as "CSV UTF-8"`;
    expect((await run('validate', path)).stdout).toBe(
      `warning  ${warning}\n${path}: 3 nodes, 0 errors, 1 warning\n`,
    );
    expect(await run('call', path, 'price(5)')).toEqual({
      code: 0,
      stdout: '"Café: 5 €"\n',
      stderr: `warning: ${warning}\n`,
    });
    expect((await run('show', path)).stdout).toContain('    Très bien');
  });

  it('keeps a semicolon in a comma-separated spreadsheet as text', async () => {
    const path = spreadsheet('commas.csv', ',', utf8);
    expect((await run('show', path)).stdout).toContain('    ? Again; or on?');
  });

  it('says how cells are separated when the header row is one column', async () => {
    const path = join(dir, 'pipes.csv');
    writeFileSync(path, 'Name|Action\nstart|chat\n');
    expect(await run('validate', path)).toEqual({
      code: 1,
      stdout:
        `error    ${path}: no "Name" column\n` +
        '         hint: the header row is one column, "Name|Action": separate its cells with commas, semicolons or tabs\n',
      stderr: '',
    });
  });
});
