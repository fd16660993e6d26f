import * as v from 'valibot';

/**
 * The longest URL a client may give the gateway to fetch or call (a callback, an upload's
 * `file_url`, a voice sample): browsers and CDNs agree on about 2,000 characters, and a
 * callback URL is stored on its task and sent with every delivery.
 */
export const MAX_URL_CHARS = 2048;

/** A valibot step refusing a longer URL, before it is parsed. */
export const urlLength = () =>
  v.maxLength<string, number, string>(MAX_URL_CHARS, `must be at most ${MAX_URL_CHARS} characters`);
