/**
 * Allow rules that name many commands at once: `*` stands for any characters, so `mcp__git__*` allows
 * every tool of the MCP server git.
 */

/** Whether `allow` (`--allow` names and remembered rules) lets `command` run, by its name or a pattern. */
export function allows(allow: ReadonlySet<string>, command: string): boolean {
  if (allow.has(command)) return true;
  for (const rule of allow) if (rule.includes('*') && patternOf(rule).test(command)) return true;
  return false;
}

/** The rule as a regular expression matching whole command names. */
export function patternOf(rule: string): RegExp {
  return new RegExp(`^${rule.split('*').map(escapeRegExp).join('.*')}$`);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
