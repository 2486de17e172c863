/** What `meta-agent ask` does (declared in ../commands/ask.ts). */
import { UsageMeter, formatUsage } from '../../llm/usage.js';
import type { ChatMessage } from '../../llm/types.js';
import { modelsFromOptions } from '../model-options.js';
import type { ModelOptionValues } from '../options.js';
import { writeOut, writeErr } from '../terminal.js';

/** `ask`'s options as commander parses them. */
export interface AskOptions extends ModelOptionValues {
  system?: string;
}

/** Sends `text` to the chatbot model and streams the answer to stdout; usage goes to stderr. */
export async function runAsk(text: string, options: AskOptions): Promise<void> {
  const { models } = await modelsFromOptions(options);
  const meter = new UsageMeter();
  const chatbot = meter.wrap('chatbot', models.chatbot);
  const messages: ChatMessage[] = [
    ...(options.system ? [{ role: 'system' as const, content: options.system }] : []),
    { role: 'user', content: text },
  ];
  const marker = chatbot.answersFrom === 'rules' ? '[scripted] ' : '';
  writeOut(marker);
  const completion = await chatbot.stream({ messages, purpose: 'ask' }, (chunk) => writeOut(chunk.delta));
  writeOut(completion.text.endsWith('\n') ? '' : '\n');
  writeErr(`${marker}${completion.model} · ${formatUsage(meter.total())}\n`);
}
