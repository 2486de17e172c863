/**
 * `generate_image {prompt}`: AutoGPT's image command, through the images endpoint of the run's
 * OpenAI-compatible server (the `media` resource: src/llm/media.ts). The image is written into the
 * workspace as `images/<slug of the prompt>.<png|jpg|webp>` (a new name when one is taken), and the
 * command returns that file name, as AutoGPT returns its saved file.
 */
import { z } from 'zod';
import { defineCommand, type WorkspaceFiles } from './command.js';
import { describeBytes } from './workspace.js';

const FOLDER = 'images';
/** Characters of the prompt kept in the file name. */
const SLUG_CHARS = 40;

export const generateImage = defineCommand({
  name: 'generate_image',
  title: 'Generate Image',
  description:
    'Generates an image from a text prompt with the image model of the model server and saves it in ' +
    'the workspace under images/. Returns the file name.',
  args: z.object({ prompt: z.string().min(1).describe('prompt') }),
  effect: 'write',
  needs: ['media', 'workspace'],
  async run({ prompt }, { media, workspace, signal }) {
    const image = await media.generateImage(prompt, signal);
    const file = await freeName(workspace, slug(prompt), image.extension);
    await workspace.write(file, image.bytes);
    return {
      output: `Saved the image to ${file} (${describeBytes(image.bytes.byteLength)}).`,
      files: [{ path: file, change: 'write' }],
    };
  },
});

/** `a-red-fox-in-the-snow`, from the prompt's letters and digits; `image` when it has none. */
function slug(prompt: string): string {
  const words = prompt
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return words.slice(0, SLUG_CHARS).replace(/-+$/, '') || 'image';
}

/** `images/NAME.EXT`, or `images/NAME-2.EXT` and on when that is taken: an image never replaces a file. */
async function freeName(workspace: WorkspaceFiles, name: string, extension: string): Promise<string> {
  const taken = new Set(await workspace.list(FOLDER).catch(() => []));
  for (let n = 1; ; n++) {
    const file = `${FOLDER}/${name}${n === 1 ? '' : `-${n}`}.${extension}`;
    if (!taken.has(file)) return file;
  }
}
