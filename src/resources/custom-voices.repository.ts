import type { CustomVoiceRef } from '../../providers/types.ts';
import type { Db } from '../db/database.ts';

/** What task creation needs: one account's own custom voice at one provider. */
export interface CustomVoiceLookup {
  find(provider: string, accountId: number, voiceId: string): Promise<CustomVoiceRef | undefined>;
}

/** Knows no custom voice: the default until the gateway wires the repository in. */
export const NO_CUSTOM_VOICES: CustomVoiceLookup = { find: async () => undefined };

/** `custom_voices` rows. There is deliberately no "list": custom voices never appear in any list. */
export class CustomVoicesRepository implements CustomVoiceLookup {
  constructor(private readonly db: Db) {}

  async insert(voice: {
    provider: string;
    voiceId: string;
    accountId: number;
    name: string;
    sampleFileIds: string[];
  }): Promise<void> {
    await this.db
      .insertInto('custom_voices')
      .values({
        provider: voice.provider,
        voice_id: voice.voiceId,
        account_id: voice.accountId,
        name: voice.name,
        sample_file_ids: JSON.stringify(voice.sampleFileIds),
      })
      .execute();
  }

  async find(provider: string, accountId: number, voiceId: string): Promise<CustomVoiceRef | undefined> {
    // Another account's voice is looked up with the caller's id and so is simply not found.
    return this.db
      .selectFrom('custom_voices')
      .select(['voice_id', 'name'])
      .where('provider', '=', provider)
      .where('voice_id', '=', voiceId)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
  }
}
