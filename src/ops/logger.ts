type Level = 'debug' | 'info' | 'warn' | 'error' | 'silent';
const RANK: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 99 };

/**
 * JSON lines on stdout. Lines are buffered and written in one syscall per tick (or at 64 KiB), so
 * logging every request costs the request path a string push, not a write.
 */
export class Logger {
  private buffer: string[] = [];
  private size = 0;
  private scheduled = false;

  constructor(
    private readonly level: Level = 'info',
    private readonly write: (text: string) => void = (text) => process.stdout.write(text),
    /** Fields every line carries (with several workers: which process wrote it). */
    private readonly base: Record<string, unknown> = {},
  ) {}

  log(level: Exclude<Level, 'silent'>, msg: string, fields: Record<string, unknown> = {}): void {
    if (RANK[level] < RANK[this.level]) return;
    const line = JSON.stringify({ time: new Date().toISOString(), level, msg, ...this.base, ...fields });
    this.buffer.push(line);
    this.size += line.length;
    if (this.size > 65_536) this.flush();
    else if (!this.scheduled) {
      this.scheduled = true;
      setTimeout(() => this.flush(), 0);
    }
  }

  info(msg: string, fields?: Record<string, unknown>): void {
    this.log('info', msg, fields);
  }
  warn(msg: string, fields?: Record<string, unknown>): void {
    this.log('warn', msg, fields);
  }
  error(msg: string, fields?: Record<string, unknown>): void {
    this.log('error', msg, fields);
  }
  debug(msg: string, fields?: Record<string, unknown>): void {
    this.log('debug', msg, fields);
  }

  flush(): void {
    this.scheduled = false;
    if (this.buffer.length === 0) return;
    const text = `${this.buffer.join('\n')}\n`;
    this.buffer = [];
    this.size = 0;
    this.write(text);
  }
}

export function errorFields(err: unknown): Record<string, unknown> {
  if (err instanceof Error) return { error: err.message, error_name: err.name, stack: err.stack };
  return { error: String(err) };
}
