/** A configuration problem found at start: the process prints it and exits non-zero. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}
