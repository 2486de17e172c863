/**
 * Python's `str()` of a JSON value, without Python: how AutoGRAMS shows a variable embedded with `$var`
 * (autograms/autogram_utils.py `set_variables` pastes `str(value)`), so a Python graph's prompts and code
 * read as the reference's do. The value is what `json.loads` would give: None, True/False, int, float,
 * str, list, dict. A string on its own is itself; inside a list or dict it is its `repr()`.
 */

/** `str(value)` for the value `json.loads` would make of `value`'s JSON. */
export function pythonStr(value: unknown): string {
  return typeof value === 'string' ? value : pythonRepr(value);
}

function pythonRepr(value: unknown): string {
  if (value === null || value === undefined) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value === 'number') return numberRepr(value);
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'string') return stringRepr(value);
  if (Array.isArray(value)) return `[${value.map(pythonRepr).join(', ')}]`;
  if (typeof value === 'object')
    return `{${Object.entries(value)
      .map(([key, item]) => `${stringRepr(key)}: ${pythonRepr(item)}`)
      .join(', ')}}`;
  return stringRepr(String(value));
}

/**
 * JSON has one number type, so a whole number is shown as Python's int (`2`, not `2.0`) as long as a
 * double holds it exactly; past 2**53 it cannot be an exact int, and shows as Python's float (`1e+16`).
 */
function numberRepr(n: number): string {
  if (Number.isSafeInteger(n) && !Object.is(n, -0)) return String(n);
  return floatRepr(n);
}

/**
 * Python's `repr(float)`: the shortest digits that read back as the same double (JavaScript finds the
 * same ones), in positional notation when the decimal point falls within 16 digits and not more than
 * four places left of the first digit, else in exponent notation with a signed, two-digit exponent.
 */
function floatRepr(n: number): string {
  if (Number.isNaN(n)) return 'nan';
  if (!Number.isFinite(n)) return n > 0 ? 'inf' : '-inf';
  const sign = n < 0 || Object.is(n, -0) ? '-' : '';
  const [mantissa, exponent] = Math.abs(n).toExponential().split('e') as [string, string];
  const digits = mantissa.replace('.', '');
  const point = Number(exponent) + 1;
  if (point > 16 || point < -3) {
    const fraction = digits.length > 1 ? `.${digits.slice(1)}` : '';
    const power = Math.abs(point - 1)
      .toString()
      .padStart(2, '0');
    return `${sign}${digits[0]}${fraction}e${point - 1 < 0 ? '-' : '+'}${power}`;
  }
  if (point <= 0) return `${sign}0.${'0'.repeat(-point)}${digits}`;
  if (point >= digits.length) return `${sign}${digits}${'0'.repeat(point - digits.length)}.0`;
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}

/** Characters Python's `str.isprintable()` refuses: control, format, surrogate, private, unassigned, separators but the space. */
const NOT_PRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u;

const ESCAPES: Record<string, string> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** Python's `repr(str)`: single quotes unless the text has one and no double quote. */
function stringRepr(text: string): string {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  let out = quote;
  // By code point, so a character outside the BMP is one character, and a lone surrogate stays one.
  for (const char of text) {
    if (char === quote) out += `\\${char}`;
    else if (ESCAPES[char]) out += ESCAPES[char];
    else if (char !== ' ' && NOT_PRINTABLE.test(char)) out += hexEscape(char.codePointAt(0)!);
    else out += char;
  }
  return out + quote;
}

function hexEscape(code: number): string {
  if (code < 0x100) return `\\x${code.toString(16).padStart(2, '0')}`;
  if (code < 0x10000) return `\\u${code.toString(16).padStart(4, '0')}`;
  return `\\U${code.toString(16).padStart(8, '0')}`;
}
