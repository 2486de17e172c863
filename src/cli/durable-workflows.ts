/**
 * Every durable workflow module, loaded before DBOS launches: DBOS registers a workflow when its module
 * is imported, and a process may be handed any workflow that a dead process left (the reaper puts it
 * back where every process takes work), so each process that launches DBOS knows them all.
 */
import '../durable/flow-pass.js';
import './simulation-workflow.js';
