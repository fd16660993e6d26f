import { Elysia } from 'elysia';
import type { AppContext } from '../app/context.ts';
import { authPlugin } from '../auth/auth-plugin.ts';
import { UploadService } from '../uploads/upload-service.ts';

/**
 * `PUT {upload_url}/upload` — the API contract's three upload variants, answering its upload result
 * `{success, file_url}` (no envelope); errors are envelopes. `parse: 'none'` keeps Elysia from
 * reading the body: the service streams it (multipart included) straight into storage, after
 * authentication, within `MAX_UPLOAD_BYTES`.
 */
export function uploadRoutes(ctx: AppContext) {
  const uploads = new UploadService(ctx);
  return new Elysia({ name: 'uploads' }).use(authPlugin(ctx, { body: 'stream' })).put(
    '/upload',
    async ({ auth, request }) => {
      const saved = await uploads.upload(auth.accountId, request);
      return { success: true as const, file_url: saved.url };
    },
    { parse: 'none' },
  );
}
