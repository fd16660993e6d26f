/** Defined beside the config schemas (providers/config), which providers raise it from. */
export { ConfigError } from '../../providers/config/config-error.ts';
