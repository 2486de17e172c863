import type { Command } from 'commander';
import { register as registerExport } from './export.js';
import { register as registerValidate } from './validate.js';
import { register as registerShow } from './show.js';
import { register as registerHistory } from './history.js';
import { register as registerDoctor } from './doctor.js';
import { register as registerModels } from './models.js';
import { register as registerAsk } from './ask.js';
import { register as registerDesign } from './design.js';
import { register as registerChat } from './chat.js';
import { register as registerCall } from './call.js';
import { register as registerSimulate } from './simulate.js';
import { register as registerRun } from './run.js';
import { register as registerApprove } from './approve.js';
import { register as registerMemory } from './memory.js';
import { register as registerFlow } from './flow.js';
import { register as registerAipl } from './aipl.js';
import { register as registerServe } from './serve.js';
import { register as registerMcp } from './mcp.js';
import { register as registerWorker } from './worker.js';

/**
 * Every command registers itself on the program. One file per command in this folder, declaring only its
 * arguments, options and help; its action imports the implementation (../actions/NAME.ts) when it runs, so
 * `--help` loads little beyond commander and a command loads only what it uses. The type of a command's
 * parsed options is declared by the action that reads them; a command imports it as a type only, which
 * loads nothing, so an action never imports its command.
 */
export type RegisterCommand = (program: Command) => void;

/** In the order `--help` lists them: set-up checks, the main jobs, then the graph tools. */
export const commands: RegisterCommand[] = [
  registerDoctor,
  registerModels,
  registerAsk,
  registerDesign,
  registerChat,
  registerCall,
  registerSimulate,
  registerRun,
  registerApprove,
  registerMemory,
  registerFlow,
  registerAipl,
  registerServe,
  registerMcp,
  registerWorker,
  registerValidate,
  registerShow,
  registerExport,
  registerHistory,
];
