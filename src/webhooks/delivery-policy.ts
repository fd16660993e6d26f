/** Rules every webhook delivery follows, whoever schedules or sends it. */

/** The cap on a task's delivery log, automatic and manual attempts together (docs/api-contract.md). */
export const MAX_CALLBACK_ATTEMPTS = 10;

/** A receiver took the delivery: any 2xx. Everything else, no answer included, is a failed attempt. */
export const delivered = (status: number) => status >= 200 && status < 300;

/** How long a delivery stays one instance's while its POST is in flight. */
export const DELIVERY_LEASE_MS = 30_000;
