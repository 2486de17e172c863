/** The view of a flow pass (`meta-agent flow run` in a terminal); the CLI imports this module lazily. */
export { renderFlowUI, type FlowUI, type FlowUIOptions } from './render.js';
export { FlowLayout, type FlowLayoutProps } from './FlowLayout.js';
export {
  createFlowStore,
  FLOW_THROTTLE_MS,
  type FlowScreen,
  type FlowStore,
  type FlowStoreOptions,
} from './flow-store.js';
export {
  initialFlowView,
  reduceFlowView,
  LIVE_CHARS,
  type FlowChangeView,
  type FlowEnd,
  type FlowNodeView,
  type FlowReport,
  type FlowView,
  type FlowViewStart,
  type ShownNodeStatus,
} from './view-state.js';
