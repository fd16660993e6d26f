import { h } from './dom.ts';

/** An error message read out at once (role=alert). */
export const errorNotice = (message: string) => h('p', { class: 'notice error', role: 'alert' }, message);

/** A success or progress message read out politely. */
export const infoNotice = (message: string) => h('p', { class: 'notice info', role: 'status' }, message);

export const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));
