/**
 * The text of a spreadsheet file, whichever encoding the spreadsheet program saved it in. Excel's
 * "CSV UTF-8" writes UTF-8 with a byte order mark, its "Unicode Text" UTF-16 with one, and its plain
 * "CSV" on a Western-European or American Windows writes Windows-1252, which has no mark at all.
 */

/** A spreadsheet's text, and a warning when its encoding had to be guessed. */
export interface SpreadsheetText {
  text: string;
  warnings: string[];
}

/**
 * Decodes a spreadsheet's bytes: UTF-16 by its byte order mark, else UTF-8 (with or without a mark),
 * else Windows-1252 with a warning. Bytes that are not UTF-8 are read rather than refused: a file
 * that is not UTF-8 almost always comes from Excel's plain "CSV" on Windows, whose accented letters
 * then come out right, and where the guess is wrong (another code page) the warning says how to save
 * the file so that it is read exactly. `source` names the file in the warning.
 */
export function decodeSpreadsheet(bytes: Uint8Array, source: string): SpreadsheetText {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return { text: decode(bytes, 'utf-16le'), warnings: [] };
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return { text: decode(bytes, 'utf-16be'), warnings: [] };
  try {
    return { text: new TextDecoder('utf-8', { fatal: true }).decode(bytes), warnings: [] };
  } catch {
    return {
      text: decode(bytes, 'windows-1252'),
      warnings: [
        `${source}: not UTF-8, so read as Windows-1252 (Excel's plain "CSV" on Windows); if letters look wrong, save it as "CSV UTF-8"`,
      ],
    };
  }
}

/** Decodes with the byte order mark, if any, left out of the text. */
function decode(bytes: Uint8Array, encoding: string): string {
  return new TextDecoder(encoding).decode(bytes);
}
