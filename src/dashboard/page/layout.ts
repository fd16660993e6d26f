import { h } from './dom.ts';

export const NAV = [
  { path: '/dashboard', label: 'Overview' },
  { path: '/dashboard/key', label: 'API key' },
  { path: '/dashboard/keys', label: 'Keys' },
  { path: '/dashboard/webhooks', label: 'Webhooks' },
  { path: '/dashboard/tasks', label: 'Tasks' },
  { path: '/dashboard/models', label: 'Models' },
  { path: '/dashboard/playground', label: 'Playground' },
];

export interface Shell {
  root: HTMLElement;
  main: HTMLElement;
  /** Marks the nav link of the current page (aria-current), by path prefix. */
  setCurrent(path: string): void;
}

/** The frame around every signed-in page: a header with the product name and sign-out, the nav, <main>. */
export function shell(onSignOut: () => void): Shell {
  const links = NAV.map((item) => h('a', { href: item.path, class: 'nav-link' }, item.label));
  const main = h('main', { id: 'main', tabindex: '-1' });
  const signOut = h('button', { type: 'button', class: 'button secondary small' }, 'Sign out');
  signOut.addEventListener('click', onSignOut);
  const root = h(
    'div',
    { class: 'shell' },
    h(
      'header',
      { class: 'topbar' },
      h(
        'a',
        { href: '/dashboard', class: 'brand' },
        h('span', { class: 'brand-mark', 'aria-hidden': 'true' }, '◆'),
        'Gateway',
      ),
      signOut,
    ),
    h(
      'nav',
      { class: 'sidenav', 'aria-label': 'Dashboard' },
      h(
        'ul',
        null,
        links.map((link) => h('li', null, link)),
      ),
    ),
    main,
  );
  return {
    root,
    main,
    setCurrent(path) {
      NAV.forEach((item, i) => {
        const current =
          item.path === '/dashboard'
            ? path === '/dashboard' || path === '/dashboard/'
            : path === item.path || path.startsWith(`${item.path}/`);
        const link = links[i] as HTMLAnchorElement;
        if (current) link.setAttribute('aria-current', 'page');
        else link.removeAttribute('aria-current');
      });
    },
  };
}
