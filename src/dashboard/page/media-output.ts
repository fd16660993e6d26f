import { h } from './dom.ts';

const URL_FIELDS: Array<[field: string, kind: 'image' | 'video' | 'audio']> = [
  ['image_url', 'image'],
  ['image_urls', 'image'],
  ['video_url', 'video'],
  ['audio_url', 'audio'],
  ['audio_urls', 'audio'],
];

/** The distinct media URLs of a task output (`image_urls` repeats `image_url`), in order. */
function mediaUrls(output: Record<string, unknown>): Array<{ url: string; kind: 'image' | 'video' | 'audio' }> {
  const seen = new Set<string>();
  const out: Array<{ url: string; kind: 'image' | 'video' | 'audio' }> = [];
  for (const [field, kind] of URL_FIELDS) {
    const value = output[field];
    for (const url of Array.isArray(value) ? value : [value]) {
      if (typeof url === 'string' && !seen.has(url)) {
        seen.add(url);
        out.push({ url, kind });
      }
    }
  }
  return out;
}

/** Inline players for a task's output: <img>, <video> or <audio>, each with a link to the file. */
export function mediaOutput(output: Record<string, unknown>, what: string): HTMLElement {
  const items = mediaUrls(output);
  return h(
    'div',
    { class: 'media-grid' },
    items.map(({ url, kind }, i) => {
      const name = `${what} output ${i + 1} of ${items.length}`;
      const player =
        kind === 'image'
          ? h('img', { src: url, alt: name, loading: 'lazy' })
          : kind === 'video'
            ? h('video', { src: url, controls: true, preload: 'metadata', 'aria-label': name })
            : h('audio', { src: url, controls: true, preload: 'metadata', 'aria-label': name });
      return h(
        'figure',
        { class: `media ${kind}` },
        player,
        h('figcaption', null, h('a', { href: url, target: '_blank', rel: 'noopener' }, `Open ${kind} ${i + 1}`)),
      );
    }),
  );
}
