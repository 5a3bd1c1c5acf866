export interface SseEvent {
  event: string;
  data: unknown;
}

/**
 * Server-sent events (`event:` name, default `message`, and JSON `data:`) read from `reader` into
 * `events` until `stop` says so or the stream ends. The reader stays open: call again to read on.
 */
export async function readSseEvents(
  reader: ReadableStreamDefaultReader<string>,
  stop: (event: SseEvent) => boolean = () => false,
  events: SseEvent[] = [],
): Promise<SseEvent[]> {
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return events;
    buffer += value;
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event = { event: /^event: (.*)$/m.exec(block)?.[1] ?? 'message', data: JSON.parse(/^data: (.*)$/m.exec(block)?.[1] ?? 'null') as unknown };
      events.push(event);
      if (stop(event)) return events;
    }
  }
}
