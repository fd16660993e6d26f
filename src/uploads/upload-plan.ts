/**
 * Upload limits (docs/api-contract.md, "Limits"). The plan follows what the account has ever topped
 * up (`accounts.topped_up_usd`, opening balances included), not its current balance: spending
 * money never demotes an account.
 */
export interface UploadPlan {
  name: 'free' | 'topped_up';
  uploadsPerMinute: number;
  bytesPerDay: number;
}

const GIB = 1024 ** 3;
export const TOPPED_UP_THRESHOLD_USD = 5;
export const FREE_PLAN: UploadPlan = { name: 'free', uploadsPerMinute: 5, bytesPerDay: GIB };
export const TOPPED_UP_PLAN: UploadPlan = { name: 'topped_up', uploadsPerMinute: 50, bytesPerDay: 10 * GIB };

export function uploadPlanFor(toppedUpUsd: number): UploadPlan {
  return toppedUpUsd >= TOPPED_UP_THRESHOLD_USD ? TOPPED_UP_PLAN : FREE_PLAN;
}

/** `1 GB`, `10 GB`, `512 MB`: limits as people read them (binary units). */
export function formatBytes(n: number): string {
  if (n >= GIB && n % GIB === 0) return `${n / GIB} GB`;
  if (n >= 1024 ** 2 && n % 1024 ** 2 === 0) return `${n / 1024 ** 2} MB`;
  return `${n} bytes`;
}
