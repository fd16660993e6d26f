import { Elysia } from 'elysia';
import { createProviders } from '../../providers/registry.ts';
import type { ProviderResources, ResourceHost } from '../../providers/common/resources.ts';
import type { Provider } from '../../providers/types.ts';
import type { AppContext } from '../app/context.ts';
import { authPlugin } from '../auth/auth-plugin.ts';
import { envelope } from '../http/envelope.ts';
import { forbidden, notFound } from '../http/errors.ts';
import { modelAllowed } from '../keys/key-policy.ts';
import { parseOr422 } from '../http/parse.ts';
import { createCustomVoice } from '../resources/create-custom-voice.ts';
import { CustomVoicesRepository } from '../resources/custom-voices.repository.ts';
import { MotionPresetsCache } from '../resources/motion-presets-cache.ts';
import { CustomVoiceBody, parseMotionQuery, parsePhraseLanguage } from '../resources/resource-requests.ts';

export interface ResourceRoutesOptions {
  /** Defaults to the configured providers (they are pure functions of the config). */
  providers?: ReadonlyMap<string, Provider>;
  /** Clock of the motion-preset cache. */
  now?: () => number;
}

/**
 * Provider resources (docs/api-contract.md): each path is served by the
 * provider whose id is the vendor slug, through the handler it declares; a provider without that
 * handler (or an unknown product or model family) is a 404. Motion presets name a product, not a
 * vendor, so they are routed to the provider declaring that product.
 */
export function resourceRoutes(ctx: AppContext, opts: ResourceRoutesOptions = {}) {
  const providers = opts.providers ?? createProviders(ctx.config.providers);
  const customVoices = new CustomVoicesRepository(ctx.db);
  const motions = new MotionPresetsCache(ctx.store, { now: opts.now });

  /** The vendor's resources, known to have `key`: called as methods, so a class-based provider keeps `this`. */
  const resourcesWith = <K extends keyof ProviderResources>(vendor: string, key: K, what: string) => {
    const provider = providers.get(vendor);
    if (!provider) throw notFound(`unknown provider ${vendor}`);
    const resources = provider.resources;
    if (resources?.[key] === undefined) throw notFound(`provider ${vendor} has no ${what}`);
    return resources as ProviderResources & Required<Pick<ProviderResources, K>>;
  };
  const host = (vendor: string): ResourceHost => ({
    assetUrl: (name) =>
      `${ctx.env.publicUrl}/v1/resources/${encodeURIComponent(vendor)}/samples/${encodeURIComponent(name)}`,
  });

  const api = new Elysia({ name: 'resources', prefix: '/v1/resources' })
    .use(authPlugin(ctx))
    .get('/:vendor/:product/voices', async ({ params }) => {
      const voices = await resourcesWith(params.vendor, 'listVideoVoices', 'video voices').listVideoVoices(
        params.product,
      );
      if (!voices) throw notFound(`provider ${params.vendor} has no product ${params.product}`);
      return envelope(voices);
    })
    .get('/:vendor/voices/:family', async ({ params }) => {
      const voices = await resourcesWith(params.vendor, 'listStringVoices', 'voice presets').listStringVoices(
        params.family,
        host(params.vendor),
      );
      if (!voices) throw notFound(`provider ${params.vendor} has no model family ${params.family}`);
      return envelope(voices);
    })
    .get('/:vendor/voices', async ({ params }) =>
      envelope({
        voices: await resourcesWith(params.vendor, 'listSpeechVoices', 'speech voices').listSpeechVoices(
          host(params.vendor),
        ),
      }),
    )
    .post('/:vendor/voices', async ({ auth, params, body, request }) => {
      const resources = resourcesWith(params.vendor, 'createCustomVoice', 'custom voices');
      // A voice is made for the provider's models: a key kept to other models may not make one.
      if (auth.policy && !modelAllowed(auth.policy.models, params.vendor))
        throw forbidden(`model_not_allowed: this API key may not use the provider '${params.vendor}'`);
      const req = parseOr422(CustomVoiceBody, body);
      return envelope(
        await createCustomVoice(
          ctx,
          customVoices,
          { id: params.vendor, resources },
          { accountId: auth.accountId, ...req, signal: request.signal },
        ),
      );
    })
    .get('/:vendor/voice/verification-phrase', async ({ params, query }) => {
      const resources = resourcesWith(params.vendor, 'verificationPhrase', 'verification phrases');
      return envelope(await resources.verificationPhrase(parsePhraseLanguage(query)));
    });

  // Voice samples and previews are played by <audio> elements and media players, which send no
  // Authorization header: like stored files, they are served without a key. They are the same
  // public, deterministic recordings for every caller, so there is nothing to protect.
  const samples = new Elysia({ name: 'resource-samples' }).get(
    '/v1/resources/:vendor/samples/:name',
    async ({ params }) => {
      const asset = await resourcesWith(params.vendor, 'asset', 'samples').asset(params.name);
      if (!asset) throw notFound(`sample ${params.name} not found`);
      return new Response(asset.body as Uint8Array<ArrayBuffer>, {
        headers: {
          'content-type': asset.contentType,
          'cache-control': 'public, max-age=86400',
          'x-content-type-options': 'nosniff',
          'content-disposition': `inline; filename="${params.name.replace(/["\\\r\n]/g, '')}"`,
        },
      });
    },
  );

  // `GET /<product>/motions` (and with /v1): one static route per declared product, so no
  // catch-all `/:product/motions` can shadow another module's paths.
  const motionRoutes = new Elysia({ name: 'resource-motions' }).use(authPlugin(ctx));
  const seen = new Set<string>();
  for (const provider of providers.values()) {
    const resources = provider.resources;
    const product = resources?.motionProduct;
    const listMotions = resources?.listMotions?.bind(resources);
    if (!listMotions || !product || seen.has(product)) continue;
    seen.add(product);
    const serve = async ({ query }: { query: Record<string, unknown> }) => {
      const q = parseMotionQuery(query);
      return envelope(await motions.get(provider.id, q, () => listMotions(q)));
    };
    motionRoutes.get(`/${product}/motions`, serve).get(`/v1/${product}/motions`, serve);
  }

  return new Elysia().use(api).use(samples).use(motionRoutes);
}
