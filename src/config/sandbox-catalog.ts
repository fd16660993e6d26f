/**
 * The built-in catalog used when `GATEWAY_CONFIG` is unset: the offline sandbox provider of
 * docs/api-contract.md. Media prices are declared by the sandbox provider itself from each input.
 */
export const SANDBOX_CONFIG = {
  providers: [{ id: 'sandbox', kind: 'sandbox', display_name: 'Sandbox' }],
  models: [
    {
      id: 'sandbox/echo',
      category: 'llm',
      display_name: 'Echo',
      created: 1735689600,
      context_length: 32768,
      max_output: 8192,
      pricing: { input_per_mtok: 1, output_per_mtok: 2 },
    },
    {
      id: 'sandbox/embed',
      category: 'embedding',
      display_name: 'Sandbox Embed',
      created: 1735689600,
      pricing: { input_per_mtok: 0.02 },
    },
    { id: 'sandbox/image', category: 'image', display_name: 'Sandbox Image', created: 1735689600 },
    { id: 'sandbox/video', category: 'video', display_name: 'Sandbox Video', created: 1735689600 },
    { id: 'sandbox/speech', category: 'audio', display_name: 'Sandbox Speech', created: 1735689600 },
  ],
};
