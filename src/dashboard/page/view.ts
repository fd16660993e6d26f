/** What every page of the dashboard is given when it is shown. */
export interface ViewContext {
  /** The <main> element the view renders into. */
  main: HTMLElement;
  /** Path parameters, e.g. `{ id }` for /dashboard/tasks/:id. */
  params: Record<string, string>;
  query: URLSearchParams;
  /** Aborted when the user leaves the page: stops polls and streams. */
  signal: AbortSignal;
  navigate(path: string, opts?: { replace?: boolean }): void;
  /** Sets the document title and the page's <h1>, which receives focus after navigation. */
  heading(title: string, ...intro: Array<Node | string>): void;
}

export type View = (ctx: ViewContext) => Promise<void> | void;

/** Waits `ms`, or less when the view is left; resolves false when it was. */
export function pause(ms: number, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(false);
    const timer = setTimeout(() => resolve(!signal.aborted), ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve(false);
    });
  });
}
