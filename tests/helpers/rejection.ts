/**
 * The error a promise rejects with. The SDKs return `APIPromise` thenables that bun's
 * `expect(…).rejects` does not follow (the rejection escapes the test), so tests await them here.
 */
export async function rejection(promise: PromiseLike<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected the promise to reject, but it resolved');
}
