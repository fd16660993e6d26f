/** `--name N` from the benchmark's command line as a number; `fallback` when absent, empty, zero or not a number. */
export function numberArg(name: string, fallback: number): number {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) || fallback : fallback;
}

/** `--name value` from the benchmark's command line; `fallback` when the flag is absent or last. */
export function stringArg(name: string, fallback: string): string {
  const i = process.argv.indexOf(name);
  return i >= 0 ? (process.argv[i + 1] ?? fallback) : fallback;
}
