/**
 * The page's own stylesheet, laid over the exported page's (html-style.ts), whose drawing and node panel
 * it keeps: three columns (chat, drawing, side panel), the live marks on the drawing, the version
 * history and the goal runs. Sized for a laptop screen (1280x800) and up.
 */
export const PAGE_STYLE = `
header .brand { font-size: 17px; font-weight: 650; margin: 0; }
header .brand span { color: #627d98; font-weight: 500; }
header label.picker { display: flex; align-items: center; gap: 6px; color: #52606d; }
header select#graph-picker { font-weight: 600; min-width: 180px; }
header .description { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
header form#key-form { display: flex; gap: 6px; }
header form#key-form[hidden] { display: none; }
header input#api-key { width: 200px; }
button.primary, header button.primary { background: #1f6feb; border-color: #1f6feb; color: #fff; }
button.primary:hover, header button.primary:hover { background: #1a5fd0; }
button:disabled, header button:disabled { opacity: 0.5; cursor: default; }
#notice { margin: 0; padding: 8px 16px; background: #fff4e6; color: #8a3b12; border-bottom: 1px solid #ffd8a8; }

main { min-height: 0; }
#chat {
  width: 340px; flex: none; display: flex; flex-direction: column; min-height: 0;
  background: #fff; border-right: 1px solid #d9e2ec;
}
#conversation-line { padding: 10px 14px; font-size: 12px; color: #627d98; border-bottom: 1px solid #eef2f7; }
#conversation-line code { font-size: 11px; }
#conversation-line .ended { color: #b44d12; }
#messages { list-style: none; margin: 0; padding: 12px 14px; flex: 1; overflow: auto; display: flex; flex-direction: column; gap: 10px; }
.message { max-width: 92%; }
.message .who { display: block; font-size: 11px; color: #829ab1; margin-bottom: 2px; }
.message .text { padding: 8px 11px; border-radius: 12px; white-space: pre-wrap; word-break: break-word; }
.message.assistant { align-self: flex-start; }
.message.assistant .text { background: #f0f4f8; border-top-left-radius: 4px; }
.message.user { align-self: flex-end; text-align: right; }
.message.user .text { background: #1f6feb; color: #fff; border-top-right-radius: 4px; text-align: left; }
.message.note { align-self: stretch; max-width: none; }
.message.note .text { background: #fff4e6; color: #8a3b12; font-size: 13px; }
.message .text.streaming:empty::after, .message .text.streaming::after { content: '▍'; color: #829ab1; animation: blink 1s steps(2) infinite; }
@keyframes blink { 50% { opacity: 0; } }
#composer { display: flex; gap: 8px; padding: 10px 14px; border-top: 1px solid #d9e2ec; }
#composer textarea {
  flex: 1; resize: none; font: inherit; padding: 7px 9px; border: 1px solid #bcccdc; border-radius: 8px;
}
#composer button { font: inherit; padding: 0 14px; border: 1px solid #1f6feb; border-radius: 8px; cursor: pointer; }

#drawing { flex: 1; min-width: 0; display: flex; flex-direction: column; }
#drawing .toolbar {
  display: flex; align-items: center; gap: 12px; padding: 7px 12px; background: #fff;
  border-bottom: 1px solid #d9e2ec; font-size: 13px;
}
#drawing .toolbar .spacer { flex: 1; }
#drawing .toolbar button {
  font: inherit; padding: 2px 8px; min-width: 30px; border: 1px solid #bcccdc; border-radius: 6px; background: #fff; cursor: pointer;
}
#at-node { font-weight: 600; }
#drawing .toolbar #at-node button.link { border: 0; padding: 0; min-width: 0; background: none; font-weight: 600; }
#version-line { color: #7048e8; font-weight: 600; }
#live { width: 8px; height: 8px; border-radius: 50%; background: #cbd2d9; display: inline-block; }
#live.on { background: #2f9e44; }
#live.off { background: #e8590c; }
body:not(.chatting) .legend, body:not(.chatting) #live { visibility: hidden; }
.legend { display: flex; gap: 10px; color: #52606d; font-size: 12px; }
.legend i { display: inline-block; width: 12px; height: 12px; border-radius: 3px; margin-right: 4px; vertical-align: -2px; background: #fff; border: 2px solid; }
.legend i.current { border-color: #e8590c; border-width: 3px; }
.legend i.visited { border-color: #2f9e44; }
.legend i.added { border-color: #7048e8; border-style: dashed; background: #efe9ff; }
#graph .problem, aside .problem { color: #b42318; }
#graph p.problem { max-width: 560px; margin: 40px auto; padding: 12px 16px; background: #fff; border: 1px solid #f3c1bd; border-radius: 8px; }

#graph g.node.visited > path, #graph g.node.visited > polygon, #graph g.node.visited > ellipse { stroke: #2f9e44; stroke-width: 2.5; }
#graph g.node.added > path, #graph g.node.added > polygon, #graph g.node.added > ellipse {
  fill: #efe9ff; stroke: #7048e8; stroke-width: 3; stroke-dasharray: 6 3;
}
#graph g.node.added { animation: arrive 1.5s ease-out 2; }
@keyframes arrive { 0% { filter: drop-shadow(0 0 12px rgba(112, 72, 232, 0.9)); } 100% { filter: none; } }
#graph g.node.current > path, #graph g.node.current > polygon, #graph g.node.current > ellipse {
  stroke: #e8590c; stroke-width: 4; stroke-dasharray: none;
}
#graph g.node.current { filter: drop-shadow(0 0 5px rgba(232, 89, 12, 0.55)); }
#graph g.node.selected > path, #graph g.node.selected > polygon, #graph g.node.selected > ellipse { stroke: #1f6feb; stroke-width: 3; }
#graph g.node.selected.current > path, #graph g.node.selected.current > polygon { stroke: #e8590c; }

aside { width: 380px; flex: none; padding: 0; display: flex; flex-direction: column; }
aside nav.tabs { display: flex; border-bottom: 1px solid #d9e2ec; padding: 0 8px; flex: none; }
aside nav.tabs button {
  font: inherit; border: 0; background: none; padding: 9px 12px; cursor: pointer; color: #52606d; border-bottom: 2px solid transparent;
}
aside nav.tabs button[aria-selected="true"] { color: #1f2933; font-weight: 600; border-bottom-color: #1f6feb; }
aside [role=tabpanel] { padding: 14px 16px; overflow: auto; flex: 1; }
aside [role=tabpanel][hidden] { display: none; }
aside h3 { margin: 14px 0 8px; font-size: 15px; }
aside h4 { margin: 0 0 6px; font-size: 14px; display: flex; align-items: center; gap: 6px; }
.subtle { color: #627d98; font-size: 12px; }

table.versions td.number { text-align: right; font-variant-numeric: tabular-nums; }
table.versions tr.pickable { cursor: pointer; }
table.versions tr.pickable:hover td { background: #f5f7fa; }
table.versions tr.picked td { background: #e3f0ff; }
table.versions tr.now td.number:first-child { font-weight: 700; }
table.versions td.op.add { color: #7048e8; }
table.versions td.op.remove { color: #b42318; }
.change { margin: 10px 0 14px; padding: 10px 12px; border: 1px solid #e4e7eb; border-radius: 8px; }
.badge.added { background: #efe9ff; color: #5f3dc4; }
.badge.removed { background: #fde8e8; color: #b42318; }
.badge.changed { background: #fff3e6; color: #b44d12; }
dd pre.before { background: #fdf0ef; color: #8c1d18; }
dd pre.after { background: #edf9ef; color: #1f5f2f; }
dd pre.before + pre.after { margin-top: 4px; }

#run-form { display: grid; grid-template-columns: minmax(0, 1fr); gap: 6px; margin-bottom: 12px; padding-bottom: 12px; border-bottom: 1px solid #e4e7eb; }
#run-form[hidden] { display: none; }
#run-form input, #run-form textarea, .approval-box input {
  font: inherit; padding: 5px 8px; border: 1px solid #bcccdc; border-radius: 6px; width: 100%; min-width: 0;
}
#run-form textarea { resize: vertical; }
#run-form .row { display: flex; gap: 6px; }
#run-form .row input[name=maxSteps] { flex: 0 0 110px; }
#run-form button, .approval-box button {
  font: inherit; padding: 4px 10px; border: 1px solid #bcccdc; border-radius: 6px; background: #fff; color: inherit; cursor: pointer;
}
#run-form button.primary, .approval-box button.primary { background: #1f6feb; border-color: #1f6feb; color: #fff; }
ul.run-list { list-style: none; margin: 0; padding: 0; }
ul.run-list li { display: flex; justify-content: space-between; padding: 4px 0; border-bottom: 1px solid #f0f4f8; }
ul.run-list li.picked { font-weight: 600; }
.status { font-size: 12px; padding: 1px 8px; border-radius: 10px; background: #eef2f7; color: #334e68; }
.status.running { background: #e3f0ff; color: #1d4f91; }
.status.awaiting { background: #fff3e6; color: #b44d12; }
.status.ended { background: #e3f9e5; color: #1f6f3a; }
.run-heading { display: flex; align-items: center; justify-content: space-between; gap: 8px; }
ol.goals { margin: 4px 0 10px; padding-left: 20px; }
ol.steps { list-style: none; margin: 0; padding: 0; }
li.step { padding: 8px 0; border-top: 1px solid #f0f4f8; }
.step-number { font-size: 11px; font-weight: 600; text-transform: uppercase; color: #829ab1; }
li.step .thought { margin: 4px 0; font-style: italic; }
li.step code.command { display: block; margin: 4px 0; word-break: break-word; }
li.step .result.ok > span { color: #1f6f3a; }
li.step .result.failed > span, li.step .refused { color: #b42318; }
li.step .warning { color: #b44d12; }
li.step pre { margin: 4px 0 0; padding: 6px 8px; max-height: 160px; overflow: auto; background: #f5f7fa; border-radius: 6px; font-size: 12px; white-space: pre-wrap; }
.approval-box { margin: 10px 0; padding: 12px; border: 2px solid #f59f00; border-radius: 10px; background: #fffbeb; display: grid; gap: 8px; }
.approval-box pre { margin: 0; padding: 6px 8px; background: #fff; border-radius: 6px; font-size: 12px; white-space: pre-wrap; }
.approval-box .buttons { display: flex; flex-wrap: wrap; gap: 6px; align-items: center; }
.approval-box .buttons input { width: 60px; }
.approval-box button.danger { border-color: #e03131; color: #c92a2a; }
.approval-box .feedback { display: flex; gap: 6px; }
.approval-box .feedback input { flex: 1; }
.approval-box .feedback button { flex: none; }
`;
