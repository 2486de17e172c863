/**
 * Every durable workflow module, imported before DBOS launches: DBOS runs only the workflows a process
 * registered, and the reaper may put any dead process's work back where any live one takes it, so
 * every process that launches DBOS (a worker, serve, a CLI command on a database) imports them all.
 * A process that takes goal runs also lends them its store (hostGoalRuns).
 */
import './goal-run-workflow.js';
import '../durable/approvals.js';

export { hostGoalRuns } from './goal-run-workflow.js';
