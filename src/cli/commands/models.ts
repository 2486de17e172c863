/**
 * `meta-agent models`: the GGUF models meta-agent runs itself, kept in a cache folder: list what is
 * there, pull one from Hugging Face, remove one.
 */
import type { Command } from 'commander';
import { DEFAULT_LOCAL_MODEL } from '../../llm/local/model-ref.js';
import type { ModelsListOptions } from '../actions/models.js';

const WHERE = `
A model is named hf:OWNER/NAME/FILE.gguf (a file of a Hugging Face repository) and kept in
CACHE/models/hf/OWNER/NAME/FILE.gguf, beside FILE.gguf.json (its size, SHA-256 and date). CACHE is
META_AGENT_CACHE_DIR when set, else $XDG_CACHE_HOME/meta-agent, else ~/.cache/meta-agent (Linux),
~/Library/Caches/meta-agent (macOS) or %LOCALAPPDATA%\\meta-agent\\Cache (Windows).
Files come from https://huggingface.co, or from HF_ENDPOINT (a mirror). HF_TOKEN, for a private or
gated repository, is sent to that host only, never to where it redirects. A download is checked
against the SHA-256 the hub gives before it is used; an interrupted pull (Ctrl+C, a dropped
connection) keeps what arrived, and the next pull of the same model resumes it.`;

const EXAMPLES = `
Examples:
  $ meta-agent models list
  $ meta-agent models pull                        the default model, ${DEFAULT_LOCAL_MODEL.name}
  $ meta-agent models pull hf:bartowski/Llama-3.2-3B-Instruct-GGUF/Llama-3.2-3B-Instruct-Q4_K_M.gguf
  $ meta-agent models rm hf:bartowski/Llama-3.2-3B-Instruct-GGUF/Llama-3.2-3B-Instruct-Q4_K_M.gguf
${WHERE}`;

/** Registers `models` and its subcommands. */
export function register(program: Command): void {
  const models = program
    .command('models')
    .description('list, download (from Hugging Face) and remove the GGUF models meta-agent runs itself')
    .addHelpText('after', EXAMPLES);

  models
    .command('list')
    .description('the models in the cache: reference, size and path')
    .option(
      '--json',
      'print them as JSON ({ cache, models: [{ ref, path, size, sha256, downloadedAt }], default })',
    )
    .addHelpText(
      'after',
      `
Examples:
  $ meta-agent models list
  $ meta-agent models list --json | jq -r '.models[].path'

The default model (${DEFAULT_LOCAL_MODEL.ref}) is listed too while it is not downloaded.
${WHERE}`,
    )
    .action(async (options: ModelsListOptions) => {
      const { listLocalModels } = await import('../actions/models.js');
      await listLocalModels(options);
    });

  models
    .command('pull')
    .description('download a model into the cache (progress on stderr), or say where it already is')
    .argument('[ref]', 'hf:OWNER/NAME/FILE.gguf', DEFAULT_LOCAL_MODEL.ref)
    .addHelpText(
      'after',
      `
Examples:
  $ meta-agent models pull                        ${DEFAULT_LOCAL_MODEL.name}, ${DEFAULT_LOCAL_MODEL.approximateSize}
  $ meta-agent models pull hf:Qwen/Qwen2.5-0.5B-Instruct-GGUF/qwen2.5-0.5b-instruct-q4_k_m.gguf
  $ HF_ENDPOINT=https://hf-mirror.com meta-agent models pull

Ctrl+C stops it (exit 130) and keeps what arrived; pull again to resume. No network for META_AGENT_TIMEOUT_MS
milliseconds (default 60000) ends it the same way.
${WHERE}`,
    )
    .action(async (ref: string) => {
      const { pullLocalModel } = await import('../actions/models.js');
      await pullLocalModel(ref);
    });

  models
    .command('rm')
    .description('remove a model from the cache (and any partial download of it)')
    .argument('<ref>', 'hf:OWNER/NAME/FILE.gguf, as list shows it')
    .addHelpText(
      'after',
      `
Examples:
  $ meta-agent models rm ${DEFAULT_LOCAL_MODEL.ref}
${WHERE}`,
    )
    .action(async (ref: string) => {
      const { removeLocalModel } = await import('../actions/models.js');
      await removeLocalModel(ref);
    });
}
