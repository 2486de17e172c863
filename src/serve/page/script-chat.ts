/**
 * The page's chat: a conversation opened with the agent's opening turn (POST /v1/conversations), each
 * message sent as a streamed chat completion (as any OpenAI client sends it, the conversation named by
 * X-Conversation-Id), and the conversation's event stream followed to move the marks on the drawing,
 * redraw it when the agent edits itself, and keep its version history current.
 */
export const CHAT_SCRIPT = String.raw`
  const messagesBox = document.getElementById('messages');
  const composer = document.getElementById('composer');
  const messageInput = document.getElementById('message');
  const sendButton = document.getElementById('send');
  const conversationLine = document.getElementById('conversation-line');
  const atNode = document.getElementById('at-node');
  const versionLine = document.getElementById('version-line');
  const liveDot = document.getElementById('live');
  const newConversationButton = document.getElementById('new-conversation');
  const chat = { graph: null, id: null, ended: false, busy: false, follow: null, redraw: null };

  function say(role, text) {
    const item = el('li', 'message ' + role);
    item.appendChild(el('span', 'who', role === 'user' ? 'You' : role === 'assistant' ? chat.graph.name : 'Note'));
    const body = el('div', 'text', text);
    item.appendChild(body);
    messagesBox.appendChild(item);
    messagesBox.scrollTop = messagesBox.scrollHeight;
    return body;
  }

  function setBusy(busy) {
    chat.busy = busy;
    sendButton.disabled = busy || chat.ended || !chat.graph || chat.graph.kind !== 'agent';
    messageInput.disabled = sendButton.disabled;
    newConversationButton.disabled = busy || !chat.graph || chat.graph.kind !== 'agent';
  }

  function showConversationLine() {
    document.body.classList.toggle('chatting', chat.id !== null);
    conversationLine.replaceChildren();
    if (!chat.id) {
      conversationLine.textContent =
        chat.graph && chat.graph.kind === 'agent'
          ? 'No conversation yet: send a message, or start one to hear the agent first.'
          : '';
      return;
    }
    conversationLine.appendChild(document.createTextNode('Conversation '));
    conversationLine.appendChild(el('code', '', chat.id));
    if (chat.ended) conversationLine.appendChild(el('span', 'ended', ' · ended (a quit transition was taken)'));
  }

  function showAt() {
    atNode.replaceChildren();
    if (!marks.current) return;
    atNode.appendChild(document.createTextNode('At '));
    atNode.appendChild(nodeRef(marks.current));
  }

  /** Forgets the conversation on the page (the server keeps it). */
  function leaveConversation() {
    if (chat.follow) chat.follow.abort();
    chat.follow = null;
    chat.id = null;
    chat.ended = false;
    clearTimeout(chat.redraw);
    messagesBox.replaceChildren();
    liveDot.className = '';
    clearMarks();
    showAt();
    versionLine.textContent = '';
    showConversationLine();
    showVersions();
  }

  /** Opens a new conversation with the picked agent; it speaks first when its start node does. */
  async function startConversation() {
    const graph = chat.graph;
    leaveConversation();
    setBusy(true);
    try {
      const opened = await postJson('/v1/conversations', { graph: graph.name });
      if (chat.graph !== graph) return;
      joinConversation(opened);
    } catch (error) {
      say('note', 'Could not start a conversation: ' + error.message);
    } finally {
      setBusy(false);
    }
  }

  /** Shows conversation view (id, node, ended, messages) and follows its events. */
  function joinConversation(view) {
    chat.id = view.id;
    chat.ended = view.ended;
    view.messages.forEach(function (message) { say(message.role, message.content); });
    markCurrent(view.node);
    showAt();
    showConversationLine();
    rememberPlace();
    const follow = new AbortController();
    chat.follow = follow;
    followEvents('/v1/conversations/' + encodeURIComponent(view.id) + '/events', onConversationEvent, {
      signal: follow.signal,
      onLive: function (live) { liveDot.className = live ? 'on' : 'off'; },
      onFailure: function (failure) { say('note', 'The event stream stopped: ' + failure.message); },
    });
    redrawConversation();
    showVersions();
  }

  function onConversationEvent(type, event) {
    if (type === 'node.entered') {
      markCurrent(event.node);
      showAt();
    } else if (type === 'transition' && event.kind === 'quit') {
      chat.ended = true;
      showConversationLine();
      setBusy(chat.busy);
    } else if (type === 'graph.edited') {
      if (event.op === 'add') event.nodes.forEach(function (name) { marks.added.add(name); });
      versionLine.textContent = 'version ' + event.version;
      scheduleRedraw();
    } else if (type === 'error') {
      say('note', (event.node ? event.node + ': ' : '') + event.message);
    } else if (type === 'gap') {
      scheduleRedraw();
    }
  }

  /** A turn's edits arrive together: draw once they have. */
  function scheduleRedraw() {
    clearTimeout(chat.redraw);
    chat.redraw = setTimeout(function () {
      redrawConversation();
      showVersions();
    }, 150);
  }

  /** Draws the graph the conversation runs on now: a self-editing agent's current version. */
  async function redrawConversation() {
    const id = chat.id;
    try {
      const data = await getJson('/v1/conversations/' + encodeURIComponent(id) + '/drawing');
      if (chat.id !== id) return;
      versionLine.textContent = data.selfReferential ? 'version ' + data.version : '';
      showDrawing(data);
    } catch (error) {
      if (chat.id === id) showDrawingProblem(error.message);
    }
  }

  /** Sends text as the next user message and shows the reply as it streams. */
  async function send(text) {
    if (!chat.id) await startConversation();
    if (!chat.id || chat.ended) return;
    const id = chat.id;
    say('user', text);
    const reply = say('assistant', '');
    reply.classList.add('streaming');
    setBusy(true);
    try {
      const response = await request(
        'POST',
        '/v1/chat/completions',
        { model: chat.graph.name, stream: true, messages: [{ role: 'user', content: text }] },
        { 'X-Conversation-Id': id },
      );
      await readFrames(response, function (frame) {
        if (frame.data === '[DONE]') return;
        const chunk = JSON.parse(frame.data);
        if (chunk.error) throw new ApiFailure(500, chunk.error.message, chunk.error.code);
        const delta = chunk.choices && chunk.choices[0] && chunk.choices[0].delta.content;
        if (delta) {
          reply.textContent += delta;
          messagesBox.scrollTop = messagesBox.scrollHeight;
        }
      });
      if (chat.id === id) await refreshConversation();
    } catch (error) {
      reply.parentElement.classList.replace('assistant', 'note');
      reply.textContent = 'The agent could not answer: ' + error.message;
    } finally {
      reply.classList.remove('streaming');
      if (reply.textContent === '') reply.parentElement.remove();
      setBusy(false);
      messageInput.focus();
    }
  }

  /** Where the conversation stands after a turn, from the server (the events may still be on their way). */
  async function refreshConversation() {
    const view = await getJson('/v1/conversations/' + encodeURIComponent(chat.id));
    chat.ended = view.ended;
    if (view.node) markCurrent(view.node);
    showAt();
    showConversationLine();
  }

  composer.addEventListener('submit', function (event) {
    event.preventDefault();
    const text = messageInput.value.trim();
    if (!text || chat.busy) return;
    messageInput.value = '';
    void send(text);
  });
  newConversationButton.addEventListener('click', function () { void startConversation(); });
  messageInput.addEventListener('keydown', function (event) {
    if (event.key === 'Enter' && !event.shiftKey) {
      event.preventDefault();
      composer.requestSubmit();
    }
  });
`;
