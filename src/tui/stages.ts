/** The designer's stages (outline, DOT draft, parse, …) as the design view tracks them. */
import type { AgentEvent } from '../events.js';

/** `retry` means the stage failed an attempt and is running again. */
export type StageStatus = 'running' | 'retry' | 'done' | 'fail';

/** One stage of a design run, in the order stages first reported. */
export interface DesignStage {
  name: string;
  status: StageStatus;
  retries: number;
  /** Why each retry or the failure happened, oldest first. */
  reasons: string[];
  /** The latest progress note, e.g. `7/12 nodes`. */
  detail?: string;
  /** What the model streamed during the current attempt. */
  text: string;
}

type StageEvent = Extract<AgentEvent, { type: 'design.stage' }>;

/** Folds one stage event into the list; an unseen stage is appended. */
export function reduceStage(stages: readonly DesignStage[], event: StageEvent): DesignStage[] {
  const index = stages.findIndex((s) => s.name === event.stage);
  const stage: DesignStage = stages[index] ?? {
    name: event.stage,
    status: 'running',
    retries: 0,
    reasons: [],
    text: '',
  };
  const next = nextStage(stage, event);
  return index < 0 ? [...stages, next] : stages.map((s, i) => (i === index ? next : s));
}

function nextStage(stage: DesignStage, event: StageEvent): DesignStage {
  const { detail: _old, ...rest } = stage;
  const withDetail = event.detail !== undefined ? { ...rest, detail: event.detail } : rest;
  switch (event.status) {
    case 'start':
      // A restarted stage keeps its retry history but streams afresh.
      return { ...withDetail, status: stage.status === 'retry' ? 'retry' : 'running', text: '' };
    case 'progress':
      // A progress event without a note leaves the previous note standing.
      return {
        ...(event.detail !== undefined ? withDetail : stage),
        status: stage.status === 'retry' ? 'retry' : 'running',
      };
    case 'done':
      return { ...withDetail, status: 'done' };
    case 'retry':
      return {
        ...rest,
        status: 'retry',
        retries: stage.retries + 1,
        reasons: [...stage.reasons, event.detail ?? 'no reason given'],
        text: '',
      };
    case 'fail':
      return { ...rest, status: 'fail', reasons: [...stage.reasons, event.detail ?? 'no reason given'] };
  }
}

/** Appends streamed text, keeping only the tail once it passes `limit` characters. */
export function appendBounded(text: string, delta: string, limit: number): string {
  const joined = text + delta;
  return joined.length > limit ? joined.slice(joined.length - limit) : joined;
}
