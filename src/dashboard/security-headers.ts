/**
 * Headers of every dashboard file. The CSP allows nothing but this origin (plus the file-storage
 * origin for task outputs shown in <img>/<video>/<audio>), no inline script and no framing — so
 * an injected string can never run, and the key and webhook buttons cannot be click-jacked.
 */
export function dashboardHeaders(publicUrl: string, uploadUrl: string): Record<string, string> {
  const media = new Set(["'self'", 'data:', new URL(uploadUrl).origin, new URL(publicUrl).origin]);
  const mediaSources = [...media].join(' ');
  return {
    'content-security-policy': [
      "default-src 'self'",
      "script-src 'self'",
      "style-src 'self'",
      `img-src ${mediaSources}`,
      `media-src ${mediaSources}`,
      "connect-src 'self'",
      "object-src 'none'",
      "base-uri 'none'",
      "form-action 'self'",
      "frame-ancestors 'none'",
    ].join('; '),
    'x-frame-options': 'DENY',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    // The page is small and changes with every deploy; revalidating by ETag is cheap.
    'cache-control': 'no-cache',
  };
}
