/**
 * Advice that fits the model server it is about. A server on this machine is one the user can start,
 * or give a model, and its port usually says which program it is; a remote one (api.openai.com, or any
 * other host) is reached over the network, and starting a program here would not help.
 */

/** A program that serves models, known by the port it listens on unless told otherwise. */
interface KnownServer {
  name: string;
  /** How to start it. */
  start: string;
  /** How to give it `model`, or some model when none is named. */
  addModel: (model: string | undefined) => string;
}

const KNOWN_SERVERS: ReadonlyMap<number, KnownServer> = new Map<number, KnownServer>([
  [
    11434,
    {
      name: 'Ollama',
      start: '`ollama serve`',
      addModel: (model) => (model ? `pull it: \`ollama pull ${model}\`` : 'pull one: `ollama pull llama3.2`'),
    },
  ],
  [
    1234,
    {
      name: 'LM Studio',
      start: 'its local server in the Developer tab, or `lms server start`',
      addModel: (model) => `load ${model ? `"${model}"` : 'a model'} in LM Studio (or \`lms load\`)`,
    },
  ],
  [
    8000,
    {
      name: 'vLLM',
      start: '`vllm serve MODEL`',
      addModel: (model) => `vLLM serves the model it was started with: \`vllm serve ${model ?? 'MODEL'}\``,
    },
  ],
  [
    8080,
    {
      name: 'llama.cpp',
      start: '`llama-server -m MODEL.gguf`',
      addModel: () => 'llama.cpp serves the model it was started with: `llama-server -m MODEL.gguf`',
    },
  ],
]);

/** Whether `baseUrl` names this machine: localhost, 127.x.x.x, ::1 or 0.0.0.0. */
export function isLocalServer(baseUrl: string): boolean {
  const host = hostOf(baseUrl);
  return (
    host === 'localhost' ||
    host.endsWith('.localhost') ||
    host === '::1' ||
    host === '0.0.0.0' ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)
  );
}

/** What to do when nothing answered at `baseUrl`. */
export function unreachableFix(baseUrl: string): string {
  const known = knownServer(baseUrl);
  if (isLocalServer(baseUrl)) {
    const start = known
      ? `start ${known.name} (${known.start})`
      : `start the model server meant to listen on port ${portOf(baseUrl)}`;
    return `${start}, or point OPENAI_BASE_URL or --base-url at a server that runs`;
  }
  const runs = known ? `, and that ${known.name} runs there` : '';
  return `check the URL, and that this machine can reach ${hostOf(baseUrl)} (network, VPN, proxy, firewall)${runs}`;
}

/**
 * How to get a model onto the server at `baseUrl` (`model`, when one is wanted): it lists none, or not
 * the one named.
 */
export function addModelFix(baseUrl: string, model?: string): string {
  const known = knownServer(baseUrl);
  if (isLocalServer(baseUrl)) {
    if (known) return known.addModel(model);
    return model
      ? `load or pull ${model} into the server (Ollama: \`ollama pull ${model}\`; LM Studio: load it in the app)`
      : 'load or pull a model into the server (Ollama: `ollama pull llama3.2`; LM Studio: load one in the app)';
  }
  if (known) return `${known.addModel(model)} (on ${hostOf(baseUrl)})`;
  return 'check that the URL names the server you mean, and that your API key may use its models';
}

function knownServer(baseUrl: string): KnownServer | undefined {
  return KNOWN_SERVERS.get(portOf(baseUrl));
}

function hostOf(baseUrl: string): string {
  return new URL(baseUrl).hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
}

function portOf(baseUrl: string): number {
  const url = new URL(baseUrl);
  return Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
}
