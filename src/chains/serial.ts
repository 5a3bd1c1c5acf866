/**
 * Runs tasks one at a time, in the order they were submitted; a failed task does not stop the
 * ones after it. Used where order is the state: embedded chain journals.
 */
export function serialQueue(): <T>(work: () => Promise<T>) => Promise<T> {
  let tail: Promise<unknown> = Promise.resolve();
  return (work) => {
    const next = tail.then(work, work);
    tail = next.catch(() => {});
    return next;
  };
}
