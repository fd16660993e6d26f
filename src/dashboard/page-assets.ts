import { join } from 'node:path';
import type { Logger } from '../ops/logger.ts';

const PAGE_DIR = join(import.meta.dir, 'page');
const STATIC_DIR = join(import.meta.dir, 'static');

export interface Asset {
  body: string;
  type: string;
  etag: string;
}

const asset = (body: string, type: string): Asset => ({
  body,
  type,
  etag: `"${new Bun.CryptoHasher('sha256').update(body).digest('hex').slice(0, 32)}"`,
});

/**
 * The dashboard's files: index.html and styles.css as written, and the page's TypeScript bundled
 * by Bun.build into one ES module — no other build tool, and nothing fetched from a CDN, so the
 * page works offline. Built on the first request only (an API-only deployment never pays for
 * it) and kept in memory; a failed build is retried on the next request.
 */
export class PageAssets {
  private built?: Promise<Map<string, Asset>>;

  constructor(private readonly log: Logger) {}

  get(name: string): Promise<Asset | undefined> {
    this.built ??= this.build().catch((err: unknown) => {
      this.built = undefined;
      throw err;
    });
    return this.built.then((assets) => assets.get(name));
  }

  private async build(): Promise<Map<string, Asset>> {
    const started = performance.now();
    const result = await Bun.build({
      entrypoints: [join(PAGE_DIR, 'main.ts')],
      target: 'browser',
      format: 'esm',
      minify: true,
    });
    if (!result.success || !result.outputs[0]) {
      throw new Error(`dashboard bundle failed: ${result.logs.map((l) => String(l)).join('\n')}`);
    }
    const assets = new Map<string, Asset>([
      ['index.html', asset(await Bun.file(join(STATIC_DIR, 'index.html')).text(), 'text/html; charset=utf-8')],
      ['styles.css', asset(await Bun.file(join(STATIC_DIR, 'styles.css')).text(), 'text/css; charset=utf-8')],
      ['app.js', asset(await result.outputs[0].text(), 'text/javascript; charset=utf-8')],
    ]);
    this.log.info('dashboard built', { duration_ms: Math.round(performance.now() - started) });
    return assets;
  }
}
