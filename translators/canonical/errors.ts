/**
 * Thrown by request decoders when the client's body is not valid for its wire format. `param`
 * names the field (`messages[0].content[1].image_url`), and each route renders it in its
 * format's own error shape.
 */
export class InvalidRequestError extends Error {
  constructor(
    message: string,
    readonly param?: string,
  ) {
    super(message);
    this.name = 'InvalidRequestError';
  }
}
