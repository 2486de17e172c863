/**
 * The default store: plain files the user can see, copy and pass back (`--state`, `--resume`), in the
 * formats earlier releases wrote, so what is on disk keeps loading. A key is a file's path:
 * conversations are journals (conversation-journal.ts), goal runs are journals too, run files in the
 * workspace's reserved folder (run-journal.ts), flow runs are one JSON document each.
 */
import { join } from 'node:path';
import type { ConversationState } from '../engine/state.js';
import { catalogInFolder } from './catalog.js';
import { loadStateFile, StateFile } from './conversation-journal.js';
import type { RunJournal } from './run-journal.js';
import type { Store } from './store.js';

// Most conversations never start a goal run or a flow: their files' code loads on first use.
const runFiles = () => import('../autonomous/run-file.js');
const runJournals = () => import('./run-journal.js');
const flowRunFiles = () => import('../flow/run-state.js');

/**
 * The file store; `folder` holds what has no path of its own: a server's catalog of conversations (in
 * `catalog/`). Everything else is kept under the keys given, which are paths.
 */
export function fileStore(folder = '.meta-agent'): Store {
  // A journal appends what each reply changed since this process saved it last.
  const journals = new Map<string, StateFile>();
  const runJournalsAt = new Map<string, RunJournal>();
  return {
    conversations: {
      load: loadStateFile,
      save: (path: string, state: ConversationState) => {
        let journal = journals.get(path);
        if (!journal) journals.set(path, (journal = new StateFile(path)));
        return journal.save(state);
      },
    },
    goalRuns: {
      create: async (state, names) => (await runFiles()).newRunFile(state.workspace, [...names], state.id),
      load: async (path) => (await runJournals()).loadRunFile(path),
      save: async (path, state) => {
        const [{ sealConsent }, { RunJournal }] = await Promise.all([runFiles(), runJournals()]);
        await sealConsent(state);
        let journal = runJournalsAt.get(path);
        if (!journal) runJournalsAt.set(path, (journal = new RunJournal(path)));
        await journal.save(state);
      },
    },
    flowRuns: {
      load: async (path, flow) => (await flowRunFiles()).loadFlowRun(path, flow),
      save: async (path, state) => (await flowRunFiles()).saveFlowRun(path, state),
    },
    catalog: catalogInFolder(join(folder, 'catalog')),
  };
}
