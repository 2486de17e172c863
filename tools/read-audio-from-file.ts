/**
 * `read_audio_from_file {file}`: AutoGPT's speech-to-text command. The workspace file (mp3, wav, m4a,
 * webm, ogg, flac…: the server reads the format from its name) goes to the transcription endpoint of
 * the run's OpenAI-compatible server (the `media` resource: src/llm/media.ts); the text comes back.
 */
import { z } from 'zod';
import { MAX_AUDIO_BYTES } from '../src/llm/media.js';
import { defineCommand } from './command.js';
import { workspacePath } from './workspace-path.js';

export const readAudioFromFile = defineCommand({
  name: 'read_audio_from_file',
  title: 'Convert Audio to text',
  description:
    'Transcribes a recording in the workspace (mp3, wav, m4a, webm, ogg or flac, up to 25 MiB) with the ' +
    'transcription model of the model server. Returns the text spoken in it.',
  args: z.object({ file: z.string().describe('file') }),
  effect: 'read',
  needs: ['media', 'workspace'],
  async run({ file }, { media, workspace, signal }) {
    const audio = await workspace.readBytes(file, MAX_AUDIO_BYTES);
    const path = workspacePath(file);
    const text = await media.transcribe(audio, path.split('/').at(-1)!, signal);
    return {
      output:
        text.trim() === '' ? `No speech was heard in ${path}.` : `The audio in ${path} says: ${text.trim()}`,
      files: [{ path, change: 'read' }],
    };
  },
});
