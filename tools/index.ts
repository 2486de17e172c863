/**
 * Every goal-loop command, in the order the prompt lists them (the seed's order, ours after it). A run
 * offers those whose resources it has (registry.ts).
 */
import { appendToFile } from './append-to-file.js';
import { browseWebsite } from './browse-website.js';
import { callAutogram } from './call-autogram.js';
import { cloneRepository } from './clone-repository.js';
import type { Command } from './command.js';
import { deleteAgent } from './delete-agent.js';
import { deleteFile } from './delete-file.js';
import { doNothing } from './do-nothing.js';
import { evaluateCode } from './evaluate-code.js';
import { executeJavascript } from './execute-javascript.js';
import { executePythonFile } from './execute-python-file.js';
import { executeShell } from './execute-shell.js';
import { generateImage } from './generate-image.js';
import { google } from './google.js';
import { improveCode } from './improve-code.js';
import { listAgents } from './list-agents.js';
import { memoryAdd } from './memory-add.js';
import { messageAgent } from './message-agent.js';
import { readAudioFromFile } from './read-audio-from-file.js';
import { readFile } from './read-file.js';
import { CommandRegistry } from './registry.js';
import { searchFiles } from './search-files.js';
import { startAgent } from './start-agent.js';
import { taskComplete } from './task-complete.js';
import { writeTests } from './write-tests.js';
import { writeToFile } from './write-to-file.js';

export const COMMANDS: readonly Command[] = [
  google,
  browseWebsite,
  startAgent,
  messageAgent,
  listAgents,
  deleteAgent,
  cloneRepository,
  writeToFile,
  readFile,
  appendToFile,
  deleteFile,
  searchFiles,
  evaluateCode,
  improveCode,
  writeTests,
  executePythonFile,
  generateImage,
  readAudioFromFile,
  executeJavascript,
  executeShell,
  callAutogram,
  memoryAdd,
  doNothing,
  taskComplete,
];

/** The registry of every command; `offered(resources)` narrows it to a run's. */
export function commandRegistry(): CommandRegistry {
  return new CommandRegistry(COMMANDS);
}
