/**
 * The transcripts of a Markdown file: its `console` blocks that show what their commands print. A
 * block whose commands print nothing there is a list of commands to type, not a claim about output.
 */

/** One command as the README types it (continuation lines included), and the lines it shows after it. */
export interface TranscriptCommand {
  command: string;
  output: string[];
}

/** A transcript: where its block starts (1-based line of the opening fence) and its commands. */
export interface Transcript {
  line: number;
  commands: TranscriptCommand[];
}

/** Every `console` block of `markdown` that shows output, in order. */
export function transcriptsOf(markdown: string): Transcript[] {
  const lines = markdown.split('\n');
  const transcripts: Transcript[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] !== '```console') continue;
    const start = i + 1;
    const commands: TranscriptCommand[] = [];
    for (i++; i < lines.length && lines[i] !== '```'; i++) {
      const line = lines[i]!;
      const last = commands.at(-1);
      if (line.startsWith('$ ')) commands.push({ command: line.slice(2), output: [] });
      else if (last && last.output.length === 0 && last.command.endsWith('\\')) last.command += `\n${line}`;
      else if (last) last.output.push(line);
      else throw new Error(`line ${i + 1}: a console block starts with output, before any command`);
    }
    if (commands.some((c) => c.output.length > 0)) transcripts.push({ line: start, commands });
  }
  return transcripts;
}
