import type { InvalidRequestError } from '../../translators/canonical/index.ts';

/**
 * A passed-through body that a deployment of another format cannot be sent (its translation
 * refuses it): the next deployment is tried (one of the client's format takes it as it is), and
 * the client hears the refusal, naming the field, when none is left.
 */
export class UntranslatableBody extends Error {
  override name = 'UntranslatableBody';
  constructor(readonly refusal: InvalidRequestError) {
    super(refusal.message);
  }
}
