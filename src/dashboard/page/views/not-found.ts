import { h } from '../dom.ts';
import type { ViewContext } from '../view.ts';

export function notFoundView(ctx: ViewContext): void {
  ctx.heading('Page not found');
  ctx.main.append(
    h('p', null, 'There is no dashboard page here. ', h('a', { href: '/dashboard' }, 'Back to the overview'), '.'),
  );
}
