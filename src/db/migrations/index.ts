import type { Migration } from 'kysely';
import * as m0001 from './0001-initial.ts';
import * as m0002 from './0002-post-paid-llm-usage.ts';
import * as m0003 from './0003-custom-voices.ts';
import * as m0004 from './0004-llm-reservations.ts';
import * as m0005 from './0005-task-route-attempts.ts';
import * as m0006 from './0006-task-request-id.ts';
import * as m0007 from './0007-cancelled-tasks.ts';
import * as m0008 from './0008-key-settings.ts';
import * as m0009 from './0009-recorded-task-probe.ts';
import * as m0010 from './0010-task-payload-lz4.ts';
import * as m0011 from './0011-topup-idempotency.ts';
import * as m0012 from './0012-key-period-changed.ts';
import * as m0013 from './0013-webhook-leases-index.ts';
import * as m0014 from './0014-response-wire-items.ts';
import * as m0015 from './0015-webhook-delivery-account.ts';

/** Numbered, in order. Imported statically so a bundled or compiled gateway still finds them. */
export const MIGRATIONS: Record<string, Migration> = {
  '0001-initial': m0001,
  '0002-post-paid-llm-usage': m0002,
  '0003-custom-voices': m0003,
  '0004-llm-reservations': m0004,
  '0005-task-route-attempts': m0005,
  '0006-task-request-id': m0006,
  '0007-cancelled-tasks': m0007,
  '0008-key-settings': m0008,
  '0009-recorded-task-probe': m0009,
  '0010-task-payload-lz4': m0010,
  '0011-topup-idempotency': m0011,
  '0012-key-period-changed': m0012,
  '0013-webhook-leases-index': m0013,
  '0014-response-wire-items': m0014,
  '0015-webhook-delivery-account': m0015,
};
