import v8 from 'node:v8';

/**
 * The service's heap grows to half again what survives each full collection, not V8's default of
 * up to four times. Every paid stream's ticks leave short-lived garbage that outlives the young
 * generation (a tick lives about a second), so at thousands of streams the old generation fills
 * with it: by default V8 let 300 MiB of live objects grow to 1.2 GiB of heap before collecting
 * (the streams bench, BENCHMARKS.md). Imported first by src/main.ts; V8 reads it at each collection.
 */
const HEAP_GROWING_PERCENT = 50;
v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
