import * as v from 'valibot';
import type { MediaValidationContext } from '../../providers/types.ts';
import type { CustomVoiceLookup } from '../resources/custom-voices.repository.ts';
import type { MediaRegistry, ResolvedMediaModel } from './media-registry.ts';

/** What a model's `validate` hook may ask about the caller: their own custom voices at its provider. */
export function validationContext(
  customVoices: CustomVoiceLookup,
  model: ResolvedMediaModel,
  accountId: number,
): MediaValidationContext {
  const provider = model.entry.provider.id;
  return { accountId, customVoice: (id) => customVoices.find(provider, accountId, id) };
}

/**
 * The `validate` hooks of a task's fallback candidates, run before the fallback's transaction:
 * a hook may call out (ElevenLabs' voice list) or read the database on its own connection, which
 * must not happen while the task row is locked (the embedded database has one connection). Maps
 * each candidate a hook refused to the reason, as the task record lists it; a hook that could
 * not decide (its provider unreachable) refuses too, since the next candidate may serve.
 * Candidates without a hook, or whose schema refuses the input, are left to the transaction;
 * `checked` names those whose hook ran, so one the transaction finds unchecked (the key's list
 * widened meanwhile) is skipped rather than taken without its check.
 */
export async function refusedByCallerChecks(
  registry: MediaRegistry,
  customVoices: CustomVoiceLookup,
  candidates: readonly string[],
  input: unknown,
  accountId: number,
): Promise<{ refused: Map<string, string>; checked: Set<string> }> {
  const refused = new Map<string, string>();
  const checked = new Set<string>();
  for (const id of candidates) {
    const model = registry.get(id);
    if (!model?.media.validate) continue;
    const parsed = v.safeParse(model.media.schema, input);
    if (!parsed.success) continue;
    checked.add(id);
    try {
      const issues = await model.media.validate(parsed.output, validationContext(customVoices, model, accountId));
      if (issues.length) refused.set(id, `input not valid: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`);
    } catch (err) {
      refused.set(id, `input could not be checked: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return { refused, checked };
}
