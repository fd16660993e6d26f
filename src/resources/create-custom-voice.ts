import type { ProviderResources } from '../../providers/common/resources.ts';
import type { AppContext } from '../app/context.ts';
import { notFound } from '../http/errors.ts';
import { uploadPlanFor } from '../uploads/upload-plan.ts';
import { UploadQuota } from '../uploads/upload-quota.ts';
import type { CustomVoicesRepository } from './custom-voices.repository.ts';
import { keepVoiceSamples, keptSample, removeKept } from './keep-voice-samples.ts';

/** The name a voice gets when the client gives none: a voice's name is a label, not an id. */
const DEFAULT_NAME = 'Custom voice';

export interface CreatedCustomVoice {
  voice_id: string;
  name: string;
  /** URLs of the kept copies, not of the sources. */
  samples: string[];
}

/**
 * `POST /v1/resources/<provider>/voices`: keep copies of the samples, let the provider make the
 * voice from them, and record who owns it. Nothing is left behind when a step fails.
 *
 * The kept copies are files the account stores, as uploads are: the voice counts as one upload
 * against the account's uploads a minute, and its samples' bytes against the day's upload volume
 * (docs/api-contract.md, "Limits"); else up to 625 MB a call would be stored without limit.
 */
export async function createCustomVoice(
  ctx: Pick<AppContext, 'files' | 'env' | 'store' | 'accounts'>,
  repo: CustomVoicesRepository,
  provider: { id: string; resources: Required<Pick<ProviderResources, 'createCustomVoice'>> },
  req: { accountId: number; samples: string[]; name?: string; signal?: AbortSignal },
): Promise<CreatedCustomVoice> {
  const account = await ctx.accounts.get(req.accountId);
  if (!account) throw notFound('account not found');
  const bytes = await new UploadQuota(ctx.store).admit(req.accountId, uploadPlanFor(Number(account.topped_up_usd)));
  let files: Awaited<ReturnType<typeof keepVoiceSamples>> | undefined;
  try {
    files = await keepVoiceSamples(req.samples, req.accountId, {
      files: ctx.files,
      allowPrivate: ctx.env.allowPrivateUrls,
      maxBytes: ctx.env.maxUploadBytes,
      bytes,
      signal: req.signal,
    });
    await bytes.commit();
  } catch (err) {
    // Kept, but their bytes could not be counted: no voice names them, so they go.
    if (files) await removeKept(ctx.files, files);
    // A store hiccup here only leaves the day's counter a little high: never worth masking `err`.
    await bytes.release().catch(() => undefined);
    throw err;
  }
  const name = req.name ?? DEFAULT_NAME;
  try {
    const { voice_id } = await provider.resources.createCustomVoice({
      accountId: req.accountId,
      name,
      samples: files.map((f) => keptSample(f, ctx.files)),
    });
    await repo.insert({
      provider: provider.id,
      voiceId: voice_id,
      accountId: req.accountId,
      name,
      sampleFileIds: files.map((f) => f.id),
    });
    return { voice_id, name, samples: files.map((f) => f.url) };
  } catch (err) {
    await removeKept(ctx.files, files);
    // The copies are gone: their bytes go back to the day's volume.
    await bytes.release().catch(() => undefined);
    throw err;
  }
}
