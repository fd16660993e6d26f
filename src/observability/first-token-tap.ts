import type { StreamEvent } from '../../translators/canonical/index.ts';
import { OutcomeTap } from '../llm/outcome-tap.ts';
import type { LlmCallWatch } from './llm-call-observer.ts';

/** The outcome tap of a streamed call, also telling the call's watch when the first content goes out. */
export class FirstTokenTap extends OutcomeTap {
  constructor(
    private readonly watch: LlmCallWatch,
    ...args: ConstructorParameters<typeof OutcomeTap>
  ) {
    super(...args);
  }

  override accept(event: StreamEvent): Promise<void> | undefined {
    if (event.type === 'text-delta' || event.type === 'tool-call-start') this.watch.firstToken();
    return super.accept(event);
  }
}
