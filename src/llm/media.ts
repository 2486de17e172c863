/**
 * The OpenAI-compatible media endpoints a goal run uses beside chat: image generation
 * (`POST /images/generations`, answered in base64), transcription (`POST /audio/transcriptions`,
 * multipart) and speech (`POST /audio/speech`). They go to the server and with the key the run's
 * chatbot uses (config.ts), since OpenAI and local servers (LocalAI, vLLM, Speaches…) serve them under
 * the same base URL; only the model names differ, from the environment. Everything a server answers is
 * untrusted: bodies are capped (guarded-fetch.ts), calls timed out, and a failure is one line a model
 * or a user can act on, never a crash: a server without the endpoint (404) says just that.
 */
import type { ResolvedEndpoint } from './config.js';
import { guardedFetch, ResponseLimitError } from './guarded-fetch.js';
import { millisecondsFromEnv } from './timeouts.js';

/** The model names of the media endpoints, and the voice speech uses. */
export interface MediaModels {
  image: string;
  transcription: string;
  speech: string;
  voice: string;
}

/**
 * OpenAI's own names, which local servers that mimic it often accept too: its current image model,
 * its transcription model, its speech model and first voice.
 */
const DEFAULT_MEDIA_MODELS: Readonly<MediaModels> = Object.freeze({
  image: 'gpt-image-1',
  transcription: 'whisper-1',
  speech: 'tts-1',
  voice: 'alloy',
});

/** The environment variables that name each model (the voice is META_AGENT_SPEECH_VOICE). */
const MEDIA_MODEL_VARIABLES = Object.freeze({
  image: 'META_AGENT_IMAGE_MODEL',
  transcription: 'META_AGENT_TRANSCRIPTION_MODEL',
  speech: 'META_AGENT_SPEECH_MODEL',
  voice: 'META_AGENT_SPEECH_VOICE',
});

/** The largest image kept (decoded); a base64 answer is a third larger. */
export const MAX_IMAGE_BYTES = 20 * 1024 * 1024;
/** The largest audio file sent for transcription: OpenAI's own limit. */
export const MAX_AUDIO_BYTES = 25 * 1024 * 1024;
/** The largest speech answer kept: minutes of WAV. */
export const MAX_SPEECH_BYTES = 16 * 1024 * 1024;
/** The largest transcript answer read. */
const MAX_TRANSCRIPT_BYTES = 1024 * 1024;
/** How long one media call may take unless META_AGENT_TIMEOUT_MS says otherwise: images are slow. */
const DEFAULT_TIMEOUT_MS = 180_000;
/** Longest silence while an answer arrives. */
const IDLE_MS = 60_000;

/** An image as the server made it, and the file extension its bytes say it is. */
interface GeneratedImage {
  bytes: Uint8Array;
  extension: 'png' | 'jpg' | 'webp';
}

/** The media endpoints of one OpenAI-compatible server. Every failure is an Error with a one-line message. */
export class OpenAIMedia {
  readonly #apiKey: string | undefined;
  readonly #timeoutMs: number;

  constructor(
    /** The base URL, as the chatbot's (`…/v1`). */
    readonly baseUrl: string,
    apiKey: string | undefined,
    readonly models: MediaModels = DEFAULT_MEDIA_MODELS,
    timeoutMs = DEFAULT_TIMEOUT_MS,
  ) {
    this.#apiKey = apiKey;
    this.#timeoutMs = timeoutMs;
  }

  /** An image for `prompt`, decoded from the server's base64. */
  async generateImage(prompt: string, signal: AbortSignal): Promise<GeneratedImage> {
    const model = this.models.image;
    // OpenAI's gpt-image models always answer in base64 and refuse the parameter; others (dall-e,
    // local servers) answer with a URL unless asked for base64.
    const body = {
      model,
      prompt,
      n: 1,
      ...(!model.startsWith('gpt-image') && { response_format: 'b64_json' }),
    };
    const response = await this.#post('/images/generations', 'generate images', jsonBody(body), {
      maxBytes: Math.ceil((MAX_IMAGE_BYTES * 4) / 3) + 64 * 1024,
      signal,
    });
    const data = (await this.#json(response, 'images/generations')) as {
      data?: Array<{ b64_json?: unknown; url?: unknown }>;
    };
    const first = Array.isArray(data.data) ? data.data[0] : undefined;
    if (typeof first?.b64_json !== 'string') {
      const why = typeof first?.url === 'string' ? 'a URL instead of the image itself' : 'no image';
      throw new Error(`${this.baseUrl}/images/generations answered with ${why} (b64_json was asked for)`);
    }
    const bytes = Buffer.from(first.b64_json, 'base64');
    const extension = imageExtension(bytes);
    if (extension === undefined)
      throw new Error(
        `${this.baseUrl}/images/generations answered with data that is not a PNG, JPEG or WebP image`,
      );
    return { bytes, extension };
  }

  /** The text spoken in `audio` (a file named `fileName`, whose extension tells the server its format). */
  async transcribe(audio: Uint8Array, fileName: string, signal: AbortSignal): Promise<string> {
    if (audio.byteLength > MAX_AUDIO_BYTES)
      throw new Error(
        `the audio file is larger than ${MAX_AUDIO_BYTES / 1024 / 1024} MiB, more than transcription takes`,
      );
    const form = new FormData();
    form.set('file', new Blob([audio]), fileName);
    form.set('model', this.models.transcription);
    const response = await this.#post(
      '/audio/transcriptions',
      'transcribe audio',
      { body: form },
      {
        maxBytes: MAX_TRANSCRIPT_BYTES,
        signal,
      },
    );
    const data = (await this.#json(response, 'audio/transcriptions')) as { text?: unknown };
    if (typeof data.text !== 'string')
      throw new Error(`${this.baseUrl}/audio/transcriptions answered without the text of the audio`);
    return data.text;
  }

  /** `text` spoken, as WAV bytes. */
  async speech(text: string, signal: AbortSignal): Promise<Uint8Array> {
    const body = { model: this.models.speech, input: text, voice: this.models.voice, response_format: 'wav' };
    const response = await this.#post('/audio/speech', 'speak', jsonBody(body), {
      maxBytes: MAX_SPEECH_BYTES,
      signal,
    });
    return new Uint8Array(await this.#read(response, () => response.arrayBuffer()));
  }

  async #post(
    path: string,
    what: string,
    init: RequestInit,
    { maxBytes, signal }: { maxBytes: number; signal: AbortSignal },
  ): Promise<Response> {
    const url = `${this.baseUrl.replace(/\/+$/, '')}${path}`;
    const deadline = AbortSignal.timeout(this.#timeoutMs);
    const headers = new Headers(init.headers);
    if (this.#apiKey) headers.set('authorization', `Bearer ${this.#apiKey}`);
    let response: Response;
    try {
      response = await guardedFetch({ idleMs: IDLE_MS, maxBytes })(url, {
        ...init,
        method: 'POST',
        headers,
        signal: AbortSignal.any([signal, deadline]),
      });
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      if (deadline.aborted)
        throw new Error(`${url} took longer than ${this.#timeoutMs / 1000} s and was abandoned`, {
          cause: error,
        });
      throw new Error(`could not reach ${url}: ${reason(error)}`, { cause: error });
    }
    if (response.status === 404) {
      await response.body?.cancel();
      throw new Error(`the model server at ${this.baseUrl} has no ${path} endpoint (404): it cannot ${what}`);
    }
    if (!response.ok) {
      const detail = await this.#read(response, () => response.text()).catch(() => '');
      throw new Error(`${url} refused to ${what}: HTTP ${response.status}${errorMessage(detail)}`);
    }
    return response;
  }

  async #json(response: Response, path: string): Promise<unknown> {
    const text = await this.#read(response, () => response.text());
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new Error(`${this.baseUrl}/${path} answered with something that is not JSON`);
    }
  }

  /** A body read, a broken limit said in words. */
  async #read<T>(response: Response, read: () => Promise<T>): Promise<T> {
    try {
      return await read();
    } catch (error) {
      const limit = error instanceof ResponseLimitError ? error : (error as Error).cause;
      if (limit instanceof ResponseLimitError)
        throw new Error(`${response.url || this.baseUrl}: ${limit.message}, so it was not read`, {
          cause: error,
        });
      throw new Error(`${response.url || this.baseUrl}: the answer broke off (${reason(error)})`, {
        cause: error,
      });
    }
  }
}

/**
 * The media endpoints of the run's chatbot: its OpenAI-compatible server and key, with the model names
 * of `env`; none for a scripted or embedded chatbot, or for a URL a graph file chose.
 */
export function mediaFor(
  endpoint: ResolvedEndpoint,
  env: NodeJS.ProcessEnv = process.env,
): OpenAIMedia | undefined {
  if (endpoint.provider !== 'openai' || endpoint.urlFromGraph) return undefined;
  const models = {
    image: env[MEDIA_MODEL_VARIABLES.image] || DEFAULT_MEDIA_MODELS.image,
    transcription: env[MEDIA_MODEL_VARIABLES.transcription] || DEFAULT_MEDIA_MODELS.transcription,
    speech: env[MEDIA_MODEL_VARIABLES.speech] || DEFAULT_MEDIA_MODELS.speech,
    voice: env[MEDIA_MODEL_VARIABLES.voice] || DEFAULT_MEDIA_MODELS.voice,
  };
  return new OpenAIMedia(
    endpoint.baseUrl,
    endpoint.apiKey,
    models,
    millisecondsFromEnv('META_AGENT_TIMEOUT_MS'),
  );
}

function jsonBody(body: unknown): RequestInit {
  return { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } };
}

/** The extension an image's first bytes say it has. */
function imageExtension(bytes: Uint8Array): GeneratedImage['extension'] | undefined {
  const starts = (...magic: number[]) => magic.every((byte, index) => bytes[index] === byte);
  if (starts(0x89, 0x50, 0x4e, 0x47)) return 'png';
  if (starts(0xff, 0xd8, 0xff)) return 'jpg';
  if (starts(0x52, 0x49, 0x46, 0x46) && Buffer.from(bytes.subarray(8, 12)).toString('latin1') === 'WEBP')
    return 'webp';
  return undefined;
}

/** `: the message` of an OpenAI error body, one line and short; nothing when there is none. */
function errorMessage(body: string): string {
  let message: unknown;
  try {
    message = (JSON.parse(body) as { error?: { message?: unknown } }).error?.message;
  } catch {
    message = undefined;
  }
  if (typeof message !== 'string' || message.trim() === '') return '';
  const line = message.replace(/\s+/g, ' ').trim();
  return `: ${line.length > 200 ? `${line.slice(0, 200)}…` : line}`;
}

function reason(error: unknown): string {
  const cause = (error as Error).cause as NodeJS.ErrnoException | undefined;
  return cause?.code ?? cause?.message ?? (error as Error).message;
}
