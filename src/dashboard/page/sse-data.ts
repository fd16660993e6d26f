/**
 * The `data:` payloads of a server-sent-events body, as they arrive. Events are separated by a
 * blank line; a multi-line data field is joined with newlines, as the SSE standard says.
 */
export async function* sseData(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    for (let end = buffer.search(/\r?\n\r?\n/); end !== -1; end = buffer.search(/\r?\n\r?\n/)) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end).replace(/^\r?\n\r?\n/, '');
      const lines = block.split(/\r?\n/).filter((line) => line.startsWith('data:'));
      if (lines.length) yield lines.map((line) => line.slice(5).replace(/^ /, '')).join('\n');
    }
  }
}
