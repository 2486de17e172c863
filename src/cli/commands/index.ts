import type { Command } from 'commander';

/** Every command registers itself on the program. One file per command in this folder. */
export type RegisterCommand = (program: Command) => void;

export const commands: RegisterCommand[] = [];
