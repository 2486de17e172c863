/**
 * Colours by meaning, not by component. Chalk (which Ink uses) does not read `NO_COLOR`, so the choice
 * is made here: with `NO_COLOR` set every role renders as plain text, and the markers (▶ • + ~ ›) that
 * every component prints beside its colours carry the meaning alone.
 */
import { createContext, useContext } from 'react';

/** What a piece of text means; the theme decides how that looks. */
export type Role =
  | 'current'
  | 'visited'
  | 'added'
  | 'changed'
  | 'removed'
  | 'selected'
  | 'focus'
  | 'muted'
  | 'heading'
  | 'user'
  | 'agent'
  | 'ok'
  | 'warn'
  | 'error';

/** The subset of Ink `<Text>` props a theme may set. */
export interface TextStyle {
  color?: string;
  bold?: boolean;
  dimColor?: boolean;
  inverse?: boolean;
}

/** Maps each role to a text style. */
export type Theme = Readonly<Record<Role, TextStyle>>;

/** The default theme: distinct hues for run state and edits, bold for what has focus. */
export const colorTheme: Theme = {
  current: { color: 'green', bold: true },
  visited: { color: 'cyan' },
  added: { color: 'yellow', bold: true },
  changed: { color: 'magenta' },
  removed: { color: 'red' },
  selected: { inverse: true },
  focus: { color: 'blue', bold: true },
  muted: { dimColor: true },
  heading: { bold: true },
  user: { color: 'blue', bold: true },
  agent: { color: 'green', bold: true },
  ok: { color: 'green' },
  warn: { color: 'yellow' },
  error: { color: 'red', bold: true },
};

/** No styling at all: `NO_COLOR` asks for no escape codes, and bold or inverse are escape codes too. */
export const monoTheme: Theme = {
  current: {},
  visited: {},
  added: {},
  changed: {},
  removed: {},
  selected: {},
  focus: {},
  muted: {},
  heading: {},
  user: {},
  agent: {},
  ok: {},
  warn: {},
  error: {},
};

/** `NO_COLOR` set to a non-empty value (https://no-color.org) selects the plain theme. */
export function themeFromEnv(env: Readonly<Record<string, string | undefined>> = process.env): Theme {
  return env['NO_COLOR'] ? monoTheme : colorTheme;
}

/** The theme components read; entry functions provide the one chosen from the environment. */
export const ThemeContext = createContext<Theme>(colorTheme);

/** The current theme. */
export function useTheme(): Theme {
  return useContext(ThemeContext);
}
