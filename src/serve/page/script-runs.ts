/**
 * The page's goal runs: start one (name, role, up to five goals), watch its steps from its event
 * stream, and answer the approval box when a command waits for the user: y (this once), y -N (this and
 * the next N), n, or feedback for the model. A server without goal runs (no /v1/runs) gets a line
 * saying so, and the rest of the page works as before.
 */
export const RUNS_SCRIPT = String.raw`
  const runsBox = document.getElementById('runs');
  const runForm = document.getElementById('run-form');
  const runView = document.getElementById('run-view');
  const runs = { id: null, view: null, follow: null, steps: new Map() };
  const RESULT_CHARS = 2000;

  /** Lists the runs the key may see, or says the server runs no goals. */
  async function showRuns() {
    let list;
    try {
      list = await getJson('/v1/runs');
    } catch (error) {
      runForm.hidden = true;
      runsBox.replaceChildren(
        el('p', error.status === 404 ? 'hint' : 'problem',
          error.status === 404 ? 'This server does not run goals (it has no /v1/runs).' : error.message),
      );
      return;
    }
    runForm.hidden = false;
    if (list.data.length === 0) {
      runsBox.replaceChildren(hint('No goal runs yet.'));
      return;
    }
    const items = el('ul', 'run-list');
    list.data.forEach(function (view) {
      const item = el('li');
      const button = el('button', 'link', view.name || view.id);
      button.type = 'button';
      button.addEventListener('click', function () { void openRun(view.id); });
      item.appendChild(button);
      item.appendChild(el('span', 'status ' + view.status, view.status));
      if (view.id === runs.id) item.classList.add('picked');
      items.appendChild(item);
    });
    runsBox.replaceChildren(items);
  }

  runForm.addEventListener('submit', async function (event) {
    event.preventDefault();
    const goals = runForm.elements.goals.value.split('\n').map(function (line) { return line.trim(); }).filter(Boolean);
    const body = { goals: goals };
    if (runForm.elements.name.value.trim()) body.name = runForm.elements.name.value.trim();
    if (runForm.elements.role.value.trim()) body.role = runForm.elements.role.value.trim();
    if (runForm.elements.maxSteps.value) body.maxSteps = Number(runForm.elements.maxSteps.value);
    const problem = runForm.querySelector('.problem');
    problem.textContent = '';
    try {
      const view = await postJson('/v1/runs', body);
      runForm.elements.goals.value = '';
      await openRun(view.id);
    } catch (error) {
      problem.textContent = error.message;
    }
  });

  /** Shows run id: its goals and status, its steps as they come, and the approval box when it waits. */
  async function openRun(id) {
    if (runs.follow) runs.follow.abort();
    runs.id = id;
    runs.steps = new Map();
    runView.replaceChildren();
    let view;
    try {
      view = await getJson('/v1/runs/' + encodeURIComponent(id));
    } catch (error) {
      runView.replaceChildren(el('p', 'problem', error.message));
      return;
    }
    runs.view = view;
    const heading = el('div', 'run-heading');
    heading.appendChild(el('h3', '', view.name || view.id));
    heading.appendChild(el('span', 'status', ''));
    runView.appendChild(heading);
    if (view.role) runView.appendChild(el('p', 'subtle', view.role));
    const goals = el('ol', 'goals');
    view.goals.forEach(function (goal) { goals.appendChild(el('li', '', goal)); });
    runView.appendChild(goals);
    runView.appendChild(el('div', 'approval'));
    runView.appendChild(el('ol', 'steps'));
    runView.appendChild(el('p', 'spend subtle'));
    showRunStatus();
    void showRuns();
    const follow = new AbortController();
    runs.follow = follow;
    followEvents('/v1/runs/' + encodeURIComponent(id) + '/events', onRunEvent, {
      signal: follow.signal,
      isOver: function () { return runs.view && runs.view.status === 'ended'; },
      onLive: function () {},
      onFailure: function (failure) { runView.appendChild(el('p', 'problem', failure.message)); },
    });
  }

  function showRunStatus() {
    const view = runs.view;
    const status = runView.querySelector('.run-heading .status');
    status.className = 'status ' + view.status;
    status.textContent = view.status === 'ended' && view.ended ? 'ended: ' + view.ended.reason : view.status;
    const box = runView.querySelector('.approval');
    box.replaceChildren();
    if (view.status === 'awaiting' && view.awaiting) box.appendChild(approvalBox(view.awaiting));
    if (view.status === 'ended' && view.ended && view.ended.detail) box.appendChild(el('p', 'subtle', view.ended.detail));
    if (view.spend) runView.querySelector('.spend').textContent = spendText(view.spend);
  }

  function spendText(spend) {
    const parts = [spend.steps + (spend.maxSteps ? ' of ' + spend.maxSteps : '') + ' steps'];
    if (spend.tokens) parts.push(spend.tokens + ' tokens');
    if (spend.costUsd) parts.push('$' + spend.costUsd.toFixed(4));
    return parts.join(' · ');
  }

  /** The box that asks whether the waiting command may run. */
  function approvalBox(awaiting) {
    const box = el('form', 'approval-box');
    box.appendChild(el('h4', '', 'Step ' + awaiting.step + ' waits for you'));
    const command = el('div', 'command');
    command.appendChild(el('code', '', awaiting.name));
    box.appendChild(command);
    box.appendChild(el('pre', '', JSON.stringify(awaiting.args, null, 2)));
    if (awaiting.reason) box.appendChild(el('p', 'subtle', awaiting.reason));
    const buttons = el('div', 'buttons');
    const yes = el('button', 'primary', 'Allow (y)');
    yes.type = 'button';
    yes.addEventListener('click', function () { void answer('y'); });
    const no = el('button', 'danger', 'Refuse (n)');
    no.type = 'button';
    no.addEventListener('click', function () { void answer('n'); });
    buttons.append(yes, no);
    box.appendChild(buttons);
    const more = el('input');
    more.type = 'number';
    more.min = '1';
    more.value = '3';
    more.setAttribute('aria-label', 'How many more commands to allow');
    const yesMore = el('button', '', 'Allow it and the next');
    yesMore.type = 'button';
    yesMore.addEventListener('click', function () { void answer('y -' + Math.max(1, Math.floor(Number(more.value) || 1))); });
    const moreRow = el('div', 'buttons');
    moreRow.append(yesMore, more, el('span', 'subtle', '(y -N)'));
    box.appendChild(moreRow);
    const feedback = el('input');
    feedback.type = 'text';
    feedback.placeholder = 'Or tell the model what to do instead…';
    feedback.setAttribute('aria-label', 'Feedback');
    const send = el('button', '', 'Send feedback');
    send.type = 'submit';
    const row = el('div', 'feedback');
    row.append(feedback, send);
    box.appendChild(row);
    box.appendChild(el('p', 'problem'));
    box.addEventListener('submit', function (event) {
      event.preventDefault();
      if (feedback.value.trim()) void answer(feedback.value.trim());
    });
    return box;
  }

  async function answer(text) {
    const id = runs.id;
    try {
      const view = await postJson('/v1/runs/' + encodeURIComponent(id) + '/answer', { answer: text });
      if (runs.id !== id) return;
      runs.view = view;
      showRunStatus();
      void showRuns();
    } catch (error) {
      const problem = runView.querySelector('.approval-box .problem');
      if (problem) problem.textContent = error.status === 409 ? 'Nothing waits for an answer now.' : error.message;
    }
  }

  function stepItem(step) {
    let item = runs.steps.get(step);
    if (!item) {
      item = el('li', 'step');
      item.appendChild(el('span', 'step-number', 'Step ' + step));
      runs.steps.set(step, item);
      runView.querySelector('.steps').appendChild(item);
    }
    return item;
  }

  function onRunEvent(type, event) {
    const view = runs.view;
    if (type === 'goal.step') stepItem(event.step);
    else if (type === 'goal.thoughts') {
      const said = event.thoughts.speak || event.thoughts.text;
      if (said) stepItem(event.step).appendChild(el('p', 'thought', said));
    } else if (type === 'goal.command') {
      stepItem(event.step).appendChild(el('code', 'command', event.name + ' ' + JSON.stringify(event.args)));
    } else if (type === 'goal.awaiting') {
      view.status = 'awaiting';
      view.awaiting = { step: event.step, name: event.name, args: event.args, reason: event.reason };
      showRunStatus();
    } else if (type === 'goal.authorized' || type === 'goal.refused') {
      if (type === 'goal.refused')
        stepItem(event.step).appendChild(el('p', 'refused', 'Refused' + (event.feedback ? ': ' + event.feedback : '')));
      if (view.status === 'awaiting' && view.awaiting && view.awaiting.step === event.step) {
        view.status = 'running';
        delete view.awaiting;
        showRunStatus();
      }
    } else if (type === 'goal.result') {
      const output = event.output.length > RESULT_CHARS ? event.output.slice(0, RESULT_CHARS) + '…' : event.output;
      const result = el('div', event.ok ? 'result ok' : 'result failed');
      result.appendChild(el('span', '', event.ok ? '✓ ' + event.name : '✗ ' + event.name));
      if (output) result.appendChild(el('pre', '', output));
      stepItem(event.step).appendChild(result);
    } else if (type === 'goal.unusable' || type === 'goal.warning') {
      stepItem(event.step).appendChild(el('p', 'warning', event.problem || event.message));
    } else if (type === 'goal.spend') {
      view.spend = event;
      showRunStatus();
    } else if (type === 'goal.ended') {
      view.status = 'ended';
      view.ended = { reason: event.reason, detail: event.detail };
      view.spend = event;
      showRunStatus();
      void showRuns();
    }
  }
`;
