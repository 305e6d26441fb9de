/**
 * An incremental parser for text/event-stream (the WHATWG "server-sent events" format). The console reads the
 * trace stream with fetch, because EventSource cannot send the x-api-key header. Pure: unit-tested in Node.
 */
export class SseParser {
  /** @param {(e: {id: string|null, event: string, data: string}) => void} onEvent */
  constructor(onEvent) {
    this.onEvent = onEvent;
    this.buffer = '';
    this.data = [];
    this.event = '';
    this.lastEventId = null;
    this.retry = null;
    this.sawCr = false;
  }

  /** Feeds decoded text; dispatches every complete event in it. */
  push(text) {
    this.buffer += text;
    let start = 0;
    for (let k = 0; k < this.buffer.length; k++) {
      const ch = this.buffer[k];
      if (ch === '\n' && this.sawCr) {
        // The \n of a \r\n pair that was split across chunks.
        this.sawCr = false;
        start = k + 1;
        continue;
      }
      this.sawCr = false;
      if (ch !== '\n' && ch !== '\r') continue;
      this.line(this.buffer.slice(start, k));
      if (ch === '\r') {
        if (this.buffer[k + 1] === '\n') k++;
        else if (k + 1 === this.buffer.length) this.sawCr = true;
      }
      start = k + 1;
    }
    this.buffer = this.buffer.slice(start);
  }

  line(line) {
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.event = value;
    else if (field === 'id' && !value.includes('\u0000')) this.lastEventId = value;
    else if (field === 'retry' && /^\d+$/.test(value)) this.retry = Number(value);
  }

  dispatch() {
    if (this.data.length) this.onEvent({ id: this.lastEventId, event: this.event || 'message', data: this.data.join('\n') });
    this.data = [];
    this.event = '';
  }
}
