/**
 * The page's talk with the server: JSON requests that carry the API key (kept in localStorage) when the
 * server asks for one, failures in the server's own words, and Server-Sent Events read from a fetch
 * body. EventSource cannot send an Authorization header, so the streams are read by hand: a frame
 * reader, and a follower that reconnects after a drop and resumes with Last-Event-ID.
 */
export const API_SCRIPT = String.raw`
  const KEY_ITEM = 'meta-agent.apiKey';
  let apiKey = localStorage.getItem(KEY_ITEM) || '';

  /** A request the server refused or failed: its status, and its message and code. */
  class ApiFailure extends Error {
    constructor(status, message, code) {
      super(message);
      this.status = status;
      this.code = code;
    }
  }

  function authHeaders(extra) {
    const headers = Object.assign({}, extra);
    if (apiKey) headers.Authorization = 'Bearer ' + apiKey;
    return headers;
  }

  async function failureOf(response) {
    let message = 'the server answered ' + response.status + ' ' + response.statusText;
    let code = '';
    try {
      const body = await response.json();
      if (body && body.error) {
        message = body.error.message;
        code = body.error.code || '';
      }
    } catch (error) {
      // Not our error shape (a proxy's page): the status says enough.
    }
    if (response.status === 401) askForKey(message);
    return new ApiFailure(response.status, message, code);
  }

  async function request(method, path, body, extraHeaders) {
    const init = { method: method, headers: authHeaders(extraHeaders) };
    if (body !== undefined) {
      init.headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    const response = await fetch(path, init);
    if (!response.ok) throw await failureOf(response);
    return response;
  }

  async function getJson(path) {
    return (await request('GET', path)).json();
  }

  async function postJson(path, body, extraHeaders) {
    return (await request('POST', path, body, extraHeaders)).json();
  }

  /** Reads an SSE body to its end, calling onFrame({ id, event, data }) for each event in it. */
  async function readFrames(response, onFrame) {
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    let frame = { event: '', id: undefined, data: [] };
    for (;;) {
      const next = await reader.read();
      if (next.done) return;
      buffer += next.value;
      let end;
      while ((end = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, end).replace(/\r$/, '');
        buffer = buffer.slice(end + 1);
        if (line === '') {
          if (frame.data.length > 0)
            onFrame({ id: frame.id, event: frame.event || 'message', data: frame.data.join('\n') });
          frame = { event: '', id: undefined, data: [] };
        } else if (!line.startsWith(':')) {
          const colon = line.indexOf(':');
          const field = colon < 0 ? line : line.slice(0, colon);
          const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
          if (field === 'data') frame.data.push(value);
          else if (field === 'event') frame.event = value;
          else if (field === 'id') frame.id = value;
        }
      }
    }
  }

  function pause(ms, signal) {
    return new Promise(function (resolve) {
      const timer = setTimeout(resolve, ms);
      signal.addEventListener('abort', function () {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /**
   * Follows the event stream at path until options.signal aborts, or options.isOver() says its source has
   * ended: onEvent(type, data) for each event; a dropped connection is made again (waiting longer after
   * each failure) from the last event seen. A refusal (4xx) stops it, told to options.onFailure.
   * options.onLive(true/false) says whether it is connected.
   */
  async function followEvents(path, onEvent, options) {
    const signal = options.signal;
    let lastId;
    let wait = 500;
    while (!signal.aborted) {
      try {
        const response = await fetch(path, {
          headers: authHeaders(lastId ? { 'Last-Event-ID': lastId } : {}),
          signal: signal,
        });
        if (!response.ok) {
          const failure = await failureOf(response);
          if (response.status < 500) {
            options.onLive(false);
            if (options.onFailure) options.onFailure(failure);
            return;
          }
          throw failure;
        }
        options.onLive(true);
        wait = 500;
        await readFrames(response, function (frame) {
          if (frame.id) lastId = frame.id;
          onEvent(frame.event, frame.data ? JSON.parse(frame.data) : {});
        });
      } catch (error) {
        if (signal.aborted) return;
      }
      options.onLive(false);
      if (options.isOver && options.isOver()) return;
      await pause(wait, signal);
      wait = Math.min(wait * 2, 10000);
    }
  }
`;
