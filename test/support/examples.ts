/** The offline examples the README runs, as the flags that replay one (`examples/NAME.script.json`). */
import { fileURLToPath } from 'node:url';

/** `--provider scripted --script examples/NAME.script.json`, the path absolute so any cwd works. */
export function scriptedExample(name: 'quiz-designer' | 'quiz-chat' | 'haiku-run'): string[] {
  const script = fileURLToPath(new URL(`../../examples/${name}.script.json`, import.meta.url));
  return ['--provider', 'scripted', '--script', script];
}
