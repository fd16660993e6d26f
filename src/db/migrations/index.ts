import type { Migration } from 'kysely';
import * as m0001 from './0001-initial.ts';
import * as m0002 from './0002-post-paid-llm-usage.ts';
import * as m0003 from './0003-custom-voices.ts';
import * as m0004 from './0004-llm-reservations.ts';
import * as m0005 from './0005-key-settings.ts';

/** Numbered, in order. Imported statically so a bundled or compiled gateway still finds them. */
export const MIGRATIONS: Record<string, Migration> = {
  '0001-initial': m0001,
  '0002-post-paid-llm-usage': m0002,
  '0003-custom-voices': m0003,
  '0004-llm-reservations': m0004,
  '0005-key-settings': m0005,
};
