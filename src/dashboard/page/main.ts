import { SESSION_ENDED_EVENT } from './api.ts';
import { h } from './dom.ts';
import { shell, type Shell } from './layout.ts';
import { errorNotice, errorText } from './notice.ts';
import { loadSession, session, signOut } from './session.ts';
import type { View, ViewContext } from './view.ts';
import { apiKeyView } from './views/api-key.ts';
import { keysView } from './views/keys.ts';
import { modelsView } from './views/models.ts';
import { notFoundView } from './views/not-found.ts';
import { overviewView } from './views/overview.ts';
import { playgroundView } from './views/playground.ts';
import { signInView } from './views/sign-in.ts';
import { taskDetailView } from './views/task-detail.ts';
import { tasksView } from './views/tasks.ts';
import { webhooksView } from './views/webhooks.ts';

interface Route {
  pattern: RegExp;
  keys?: string[];
  view: View;
  /** Shown without a session and without the navigation frame. */
  public?: boolean;
}

const ROUTES: Route[] = [
  { pattern: /^\/dashboard\/?$/, view: overviewView },
  { pattern: /^\/dashboard\/sign-in\/?$/, view: signInView, public: true },
  { pattern: /^\/dashboard\/key\/?$/, view: apiKeyView },
  { pattern: /^\/dashboard\/keys\/?$/, view: keysView },
  { pattern: /^\/dashboard\/webhooks\/?$/, view: webhooksView },
  { pattern: /^\/dashboard\/tasks\/?$/, view: tasksView },
  { pattern: /^\/dashboard\/tasks\/([^/]+)\/?$/, keys: ['id'], view: taskDetailView },
  { pattern: /^\/dashboard\/models\/?$/, view: modelsView },
  { pattern: /^\/dashboard\/playground\/?$/, view: playgroundView },
];

const app = document.getElementById('app') as HTMLElement;
let frame: Shell | null = null;
let leaving: AbortController | null = null;
/** The first render keeps focus where the browser put it; later navigations move it to the new <h1>. */
let moveFocus = false;

function match(path: string): { route: Route; params: Record<string, string> } {
  for (const route of ROUTES) {
    const found = route.pattern.exec(path);
    if (found) {
      const params: Record<string, string> = {};
      for (const [i, key] of (route.keys ?? []).entries()) params[key] = decodeURIComponent(found[i + 1] ?? '');
      return { route, params };
    }
  }
  return { route: { pattern: /$^/, view: notFoundView }, params: {} };
}

function navigate(path: string, opts: { replace?: boolean } = {}): void {
  if (opts.replace) history.replaceState(null, '', path);
  else history.pushState(null, '', path);
  moveFocus = true;
  void show();
}

async function show(): Promise<void> {
  leaving?.abort();
  const controller = new AbortController();
  leaving = controller;
  const { pathname, search } = location;
  const { route, params } = match(pathname);

  if (!route.public && !session() && !(await loadSession())) {
    if (controller.signal.aborted) return;
    return navigate(`/dashboard/sign-in?next=${encodeURIComponent(pathname + search)}`, { replace: true });
  }
  if (controller.signal.aborted) return;

  let main: HTMLElement;
  if (route.public) {
    frame = null;
    main = h('main', { id: 'main', class: 'public', tabindex: '-1' });
    app.replaceChildren(main);
  } else {
    if (!frame) {
      frame = shell(async () => {
        await signOut();
        navigate('/dashboard/sign-in');
      });
      app.replaceChildren(frame.root);
    }
    frame.setCurrent(pathname);
    main = frame.main;
    main.replaceChildren();
  }

  const focus = moveFocus;
  moveFocus = false;
  const ctx: ViewContext = {
    main,
    params,
    query: new URLSearchParams(search),
    signal: controller.signal,
    navigate,
    heading(title, ...intro) {
      document.title = `${title} · Gateway dashboard`;
      const h1 = h('h1', { tabindex: '-1' }, title);
      main.prepend(h('div', { class: 'page-head' }, h1, intro.length ? h('p', { class: 'lead' }, ...intro) : null));
      if (focus) h1.focus();
    },
  };
  main.setAttribute('aria-busy', 'true');
  try {
    await route.view(ctx);
  } catch (err) {
    if (!controller.signal.aborted) main.append(errorNotice(errorText(err)));
  } finally {
    if (leaving === controller) main.removeAttribute('aria-busy');
  }
}

// In-page links change the view without reloading; new tabs, downloads and files work as usual.
document.addEventListener('click', (event) => {
  if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey)
    return;
  const link = (event.target as Element | null)?.closest('a');
  if (!link || link.target || link.hasAttribute('download') || link.origin !== location.origin) return;
  if (
    !/^\/dashboard(\/|$)/.test(link.pathname) ||
    link.pathname.startsWith('/dashboard/api/') ||
    link.pathname.startsWith('/dashboard/assets/')
  )
    return;
  event.preventDefault();
  navigate(link.pathname + link.search);
});

window.addEventListener('popstate', () => {
  moveFocus = true;
  void show();
});

// Any 401 from the API means the session is over (expired, signed out elsewhere, or its key regenerated).
window.addEventListener(SESSION_ENDED_EVENT, () => {
  if (match(location.pathname).route.public) return;
  navigate(`/dashboard/sign-in?next=${encodeURIComponent(location.pathname + location.search)}`, { replace: true });
});

void show();
