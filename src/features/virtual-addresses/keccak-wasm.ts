/**
 * keccak256 of one 52-byte message (a 20-byte address followed by a 32-byte salt), specialised for
 * virtual-master salt mining (spec 2.13, 8.1) and emitted as WebAssembly bytecode at start-up.
 *
 * Why WebAssembly written by hand: keccak-f[1600] is 64-bit xor / and-not / rotate work on 25
 * lanes. JavaScript has no 64-bit integers (BigInt allocates), so JS implementations split every
 * lane into two 32-bit halves and pay several operations per rotation; WebAssembly has `i64.rotl`,
 * which V8 compiles to one instruction. The module has no memory at all: the state lives in
 * locals, the loop over nonces runs inside the module, and JS calls it once per slice of nonces.
 * Rounds alternate the state between two sets of locals and compute rho-pi one row at a time, chi
 * uses lane complementing (below), and the last round of the search computes only output lane 0.
 * bench/salt-mining.ts measures it against the keccak implementations Node reaches here.
 *
 * Layout (FIPS 202 / Keccak, rate 136 bytes, so 52 bytes fit one block): the message is read as
 * little-endian 64-bit lanes: lanes 0-4 are the address and the salt's first 20 bytes, lane 5 is
 * salt bytes 20-27, lane 6 is salt bytes 28-31 plus the keccak padding byte 0x01 at message byte
 * 52; lane 16 carries the final padding bit (0x80 at byte 135). The mined salt is the nonce as a
 * 32-byte big-endian number with the nonce below 2^64, so only salt bytes 24-31 change: the high
 * half of lane 5 and the low half of lane 6, both from bswap64(nonce).
 *
 * Exports (all i64 arguments are BigInts on the JS side):
 * - `search(l0..l6, start, count: i32, mask) -> i32`: for nonce = start .. start+count-1 hashes
 *   lanes l0..l6 with bswap64(nonce) xor-ed into lane 5's high half and lane 6's low half, and
 *   returns the first offset whose output lane 0 has `(lane0 & mask) == 0` (mask = 2^(8*zeroBytes)-1:
 *   the hash's first zeroBytes bytes are zero), or -1. Its last round computes output lane 0 only.
 * - `digest(l0..l6) -> (i64, i64, i64, i64)`: the whole 32-byte digest as four lanes (tests).
 * - `head(l0..l6) -> i64`: output lane 0 through the same truncated last round as `search` (tests).
 */

const ROUND_CONSTANTS = [
  0x0000000000000001n, 0x0000000000008082n, 0x800000000000808an, 0x8000000080008000n, 0x000000000000808bn, 0x0000000080000001n,
  0x8000000080008081n, 0x8000000000008009n, 0x000000000000008an, 0x0000000000000088n, 0x0000000080008009n, 0x000000008000000an,
  0x000000008000808bn, 0x800000000000008bn, 0x8000000000008089n, 0x8000000000008003n, 0x8000000000008002n, 0x8000000000000080n,
  0x000000000000800an, 0x800000008000000an, 0x8000000080008081n, 0x8000000000008080n, 0x0000000080000001n, 0x8000000080008008n,
];
/** Rotation offsets r[x][y] of rho. */
const ROTATIONS = [
  [0, 36, 3, 41, 18],
  [1, 44, 10, 45, 2],
  [62, 6, 43, 15, 61],
  [28, 55, 25, 21, 56],
  [27, 20, 39, 8, 14],
];

// Opcodes used (WebAssembly 1.0 + multi-value).
const OP = {
  block: 0x02,
  loop: 0x03,
  end: 0x0b,
  br: 0x0c,
  brIf: 0x0d,
  ret: 0x0f,
  localGet: 0x20,
  localSet: 0x21,
  i32Const: 0x41,
  i64Const: 0x42,
  i32Eqz: 0x45,
  i32GeU: 0x4f,
  i64Eqz: 0x50,
  i32Add: 0x6a,
  i64Add: 0x7c,
  i64And: 0x83,
  i64Or: 0x84,
  i64Xor: 0x85,
  i64Shl: 0x86,
  i64ShrU: 0x88,
  i64Rotl: 0x89,
} as const;
const I32 = 0x7f;
const I64 = 0x7e;
const VOID_BLOCK = 0x40;

function uleb(value: number): number[] {
  const out: number[] = [];
  do {
    let byte = value & 0x7f;
    value >>>= 7;
    if (value !== 0) byte |= 0x80;
    out.push(byte);
  } while (value !== 0);
  return out;
}

function sleb(value: bigint): number[] {
  const out: number[] = [];
  for (;;) {
    const byte = Number(value & 0x7fn);
    value >>= 7n;
    const done = (value === 0n && (byte & 0x40) === 0) || (value === -1n && (byte & 0x40) !== 0);
    out.push(done ? byte : byte | 0x80);
    if (done) return out;
  }
}

/** A u64 constant as the signed i64 WebAssembly encodes. */
const i64 = (value: bigint): number[] => [OP.i64Const, ...sleb(BigInt.asIntN(64, value))];

/** Emits the body of one function over numbered locals. */
class Code {
  readonly bytes: number[] = [];
  get(local: number) {
    this.bytes.push(OP.localGet, ...uleb(local));
    return this;
  }
  set(local: number) {
    this.bytes.push(OP.localSet, ...uleb(local));
    return this;
  }
  op(...ops: number[]) {
    this.bytes.push(...ops);
    return this;
  }
  const64(value: bigint) {
    this.bytes.push(...i64(value));
    return this;
  }
  pipe(step: () => unknown) {
    step();
    return this;
  }
  rotl(bits: number) {
    if (bits !== 0) this.const64(BigInt(bits)).op(OP.i64Rotl);
    return this;
  }
}

/**
 * Local numbering inside a permutation body: the state alternates between A and E (round r reads
 * one and writes the other, so after 24 rounds it is back in A); B holds one row of rho-pi's
 * output at a time; C and D are theta's column parities and their mix.
 */
interface Locals {
  a: number[];
  e: number[];
  b: number[];
  c: number[];
  d: number[];
}

/**
 * Lane complementing (Keccak team, "Keccak implementation overview" 2.2): some lanes are kept
 * bitwise complemented, which turns most of chi's `~a & b` into a plain `and` or `or`. The
 * generator tracks statically which lanes are complemented (flags) and picks, per chi row, the
 * fewest `not`s that bring the state back to this set (the paper's fixed point): 8 per round
 * here instead of 25. Measured: +8% hashes/s.
 */
const COMPLEMENTED = new Set([1, 2, 8, 12, 17, 20]);

/**
 * One round from `src` into `dst`; `flags[i]`: src lane i is stored complemented. Returns dst's
 * flags. theta: C[x] = xor of column x, D[x] = C[x-1] ^ rotl(C[x+1], 1). Then per output row y:
 * rho and pi give B[x] = rotl(src[x', x] ^ D[x'], r[x'][x]) where y = 2x' + 3x mod 5 (so
 * x' = 3(y - 3x) mod 5), and chi and iota write dst[x, y] = B[x] ^ (~B[x+1] & B[x+2]) (^ RC on
 * lane 0), in the complemented forms that need the fewest `not`s. `lane0Only`: only dst lane 0.
 */
function round(code: Code, l: Locals, src: number[], dst: number[], index: number, flags: boolean[], lane0Only: boolean): boolean[] {
  const cFlags: boolean[] = [];
  for (let x = 0; x < 5; x++) {
    code.get(src[x]!);
    let flag = flags[x]!;
    for (let y = 1; y < 5; y++) {
      code.get(src[x + 5 * y]!).op(OP.i64Xor);
      flag = flag !== flags[x + 5 * y]!;
    }
    code.set(l.c[x]!);
    cFlags.push(flag);
  }
  const dFlags: boolean[] = [];
  for (let x = 0; x < 5; x++) {
    code
      .get(l.c[(x + 4) % 5]!)
      .get(l.c[(x + 1) % 5]!)
      .rotl(1)
      .op(OP.i64Xor)
      .set(l.d[x]!);
    dFlags.push(cFlags[(x + 4) % 5]! !== cFlags[(x + 1) % 5]!);
  }
  const out: boolean[] = Array<boolean>(25).fill(false);
  for (let y = 0; y < (lane0Only ? 1 : 5); y++) {
    const bFlags: boolean[] = [];
    for (let x = 0; x < (lane0Only ? 3 : 5); x++) {
      const sx = (((3 * (y - 3 * x)) % 5) + 5) % 5;
      code
        .get(src[sx + 5 * x]!)
        .get(l.d[sx]!)
        .op(OP.i64Xor)
        .rotl(ROTATIONS[sx]![x]!)
        .set(l.b[x]!);
      bFlags.push(flags[sx + 5 * x]! !== dFlags[sx]!);
    }
    const outputs = lane0Only ? [0] : [0, 1, 2, 3, 4];
    // Complementing a B lane in place (one `not`) changes the form of the up to three chi outputs
    // that read it; pick the cheapest set of B lanes to complement for this row.
    const width = bFlags.length;
    let best = { cost: Infinity, mask: 0 };
    for (let mask = 0; mask < 1 << width; mask++) {
      const f = bFlags.map((flag, i) => flag !== (((mask >> i) & 1) === 1));
      let cost = 0;
      for (let i = 0; i < width; i++) if ((mask >> i) & 1) cost++;
      for (const x of outputs) cost += chiForm(f[x]!, f[(x + 1) % 5]!, f[(x + 2) % 5]!, COMPLEMENTED.has(x + 5 * y)).nots;
      if (cost < best.cost) best = { cost, mask };
    }
    for (let i = 0; i < width; i++) {
      if (!((best.mask >> i) & 1)) continue;
      code.get(l.b[i]!).const64(-1n).op(OP.i64Xor).set(l.b[i]!);
      bFlags[i] = !bFlags[i];
    }
    for (const x of outputs) {
      const form = chiForm(bFlags[x]!, bFlags[(x + 1) % 5]!, bFlags[(x + 2) % 5]!, COMPLEMENTED.has(x + 5 * y));
      const [b1, b2] = [l.b[(x + 1) % 5]!, l.b[(x + 2) % 5]!];
      const not = () => code.const64(-1n).op(OP.i64Xor);
      code.get(b1);
      if (form.notFirst) not();
      code.get(b2);
      if (form.notSecond) not();
      code.op(form.and ? OP.i64And : OP.i64Or);
      if (form.notResult) not();
      code.get(l.b[x]!).op(OP.i64Xor);
      if (x === 0 && y === 0) code.const64(ROUND_CONSTANTS[index]!).op(OP.i64Xor);
      code.set(dst[x + 5 * y]!);
      out[x + 5 * y] = form.flag;
    }
  }
  return out;
}

/**
 * chi's `b0 ^ (~b1 & b2)` over stored lanes s_i = b_i, or ~b_i where flag f_i, in the form that
 * needs the fewest `not`s, preferring the output stored as `target` (complemented or not):
 *   f1 & !f2: s0 ^ (s1 & s2), stored like b0;  !f1 & f2: s0 ^ (s1 | s2), stored opposite to b0
 *   (~b1 & b2 = ~(s1 | s2)); otherwise one `not` on an input, and one `not` on the result when
 *   the free form would be stored unlike `target`.
 */
function chiForm(f0: boolean, f1: boolean, f2: boolean, target: boolean) {
  const form = { and: true, notFirst: false, notSecond: false, notResult: false, flag: f0, nots: 0 };
  if (f1 && !f2) Object.assign(form, { and: true, flag: f0 });
  else if (!f1 && f2) Object.assign(form, { and: false, flag: !f0 });
  else if (target === f0) Object.assign(form, f1 ? { and: true, notSecond: true } : { and: true, notFirst: true }, { flag: f0, nots: 1 });
  else Object.assign(form, f1 ? { and: false, notFirst: true } : { and: false, notSecond: true }, { flag: !f0, nots: 1 });
  if (form.flag !== target && form.nots === 0) Object.assign(form, { notResult: true, flag: !form.flag, nots: 1 });
  return form;
}

/**
 * 24 rounds from A (stored with `INITIAL_FLAGS`) ending in A; returns the final flags. With
 * `truncated`, the last round computes lane 0 only (all mining needs).
 */
function permutation(code: Code, l: Locals, truncated: boolean): boolean[] {
  let flags = INITIAL_FLAGS;
  for (let index = 0; index < 24; index++) {
    const [src, dst] = index % 2 === 0 ? [l.a, l.e] : [l.e, l.a];
    flags = round(code, l, src, dst, index, flags, truncated && index === 23);
  }
  return flags;
}

const INITIAL_FLAGS = Array.from({ length: 25 }, (_, i) => COMPLEMENTED.has(i));

const LOCAL_COUNT = 65;

/** Locals after `params` parameters: A (25), E (25), B (5), C (5), D (5), then more from `next`. */
function locals(params: number): Locals & { next: number } {
  const range = (from: number, count: number) => Array.from({ length: count }, (_, i) => from + i);
  return {
    a: range(params, 25),
    e: range(params + 25, 25),
    b: range(params + 50, 5),
    c: range(params + 55, 5),
    d: range(params + 60, 5),
    next: params + LOCAL_COUNT,
  };
}

/**
 * State from the message lanes in parameters 0-6 (`lane(i)` pushes lane i); the other lanes are 0
 * except lane 16's padding bit. Lanes in COMPLEMENTED are stored complemented.
 */
function loadState(code: Code, l: Locals, lane: (index: number) => void) {
  for (let i = 0; i < 25; i++) {
    if (i < 7) {
      lane(i);
      if (INITIAL_FLAGS[i]) code.const64(-1n).op(OP.i64Xor);
    } else {
      const value = i === 16 ? 0x8000000000000000n : 0n;
      code.const64(INITIAL_FLAGS[i] ? ~value : value);
    }
    code.set(l.a[i]!);
  }
}

/** Pushes output lane i in its true form. */
function output(code: Code, l: Locals, flags: boolean[], i: number) {
  code.get(l.a[i]!);
  if (flags[i]) code.const64(-1n).op(OP.i64Xor);
}

/**
 * The search loop, assembled with explicit blocks:
 *   block $exit
 *     loop $next
 *       br_if $exit (i >= count)
 *       ...hash...
 *       block $miss
 *         br_if $miss ((A0 & mask) != 0)
 *         return i
 *       end
 *       i++, nonce++
 *       br $next
 *     end
 *   end
 *   return -1
 */
function searchFunction(): number[] {
  const l = locals(10);
  const [index, nonce, swapped] = [l.next, l.next + 1, l.next + 2];
  const code = new Code();
  code.get(7).set(nonce);
  code.op(OP.block, VOID_BLOCK, OP.loop, VOID_BLOCK);
  code.get(index).get(8).op(OP.i32GeU, OP.brIf, 1);
  code.get(nonce);
  for (const [mask, shift] of [
    [0x00ff00ff00ff00ffn, 8n],
    [0x0000ffff0000ffffn, 16n],
  ] as const) {
    code.set(swapped).get(swapped).const64(mask).op(OP.i64And).const64(shift).op(OP.i64Shl);
    code.get(swapped).const64(shift).op(OP.i64ShrU).const64(mask).op(OP.i64And).op(OP.i64Or);
  }
  code.const64(32n).op(OP.i64Rotl).set(swapped);
  loadState(code, l, (i) => {
    code.get(i);
    if (i === 5) code.get(swapped).const64(32n).op(OP.i64Shl, OP.i64Xor);
    if (i === 6) code.get(swapped).const64(32n).op(OP.i64ShrU, OP.i64Xor);
  });
  const flags = permutation(code, l, true);
  code.op(OP.block, VOID_BLOCK);
  // (A0 & mask) != 0: a miss.
  output(code, l, flags, 0);
  code.get(9).op(OP.i64And, OP.i64Eqz, OP.i32Eqz, OP.brIf, 0);
  code.get(index).op(OP.ret);
  code.op(OP.end);
  code.get(index).op(OP.i32Const, 1, OP.i32Add).set(index);
  code.get(nonce).const64(1n).op(OP.i64Add).set(nonce);
  code.op(OP.br, 0, OP.end, OP.end);
  code.op(OP.i32Const, ...sleb(-1n));
  return body([[LOCAL_COUNT, I64], [1, I32], [2, I64]], code.bytes);
}

function digestFunction(truncated: boolean): number[] {
  const l = locals(7);
  const code = new Code();
  loadState(code, l, (i) => code.get(i));
  const flags = permutation(code, l, truncated);
  for (let i = 0; i < (truncated ? 1 : 4); i++) output(code, l, flags, i);
  return body([[LOCAL_COUNT, I64]], code.bytes);
}

/** A function body: its locals (count, type) and code, with its size in front. */
function body(localGroups: [number, number][], code: number[]): number[] {
  const content = [...uleb(localGroups.length), ...localGroups.flatMap(([count, type]) => [...uleb(count), type]), ...code, OP.end];
  return [...uleb(content.length), ...content];
}

function section(id: number, content: number[]): number[] {
  return [id, ...uleb(content.length), ...content];
}

const vector = (items: number[][]): number[] => [...uleb(items.length), ...items.flat()];
const funcType = (params: number[], results: number[]): number[] => [0x60, ...vector(params.map((p) => [p])), ...vector(results.map((r) => [r]))];
const name = (text: string): number[] => [...uleb(text.length), ...Buffer.from(text, 'utf8')];

/** The module's bytes (deterministic). */
export function keccakMinerWasm(): Uint8Array {
  const lanes = Array<number>(7).fill(I64);
  const types = vector([
    funcType([...lanes, I64, I32, I64], [I32]), // search
    funcType(lanes, [I64, I64, I64, I64]), // digest
    funcType(lanes, [I64]), // head
  ]);
  const functions = vector([[0], [1], [2]]);
  const exports = vector([
    [...name('search'), 0x00, 0],
    [...name('digest'), 0x00, 1],
    [...name('head'), 0x00, 2],
  ]);
  const code = vector([searchFunction(), digestFunction(false), digestFunction(true)]);
  return Uint8Array.from([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, types),
    ...section(3, functions),
    ...section(7, exports),
    ...section(10, code),
  ]);
}

declare const compiledModule: unique symbol;
/**
 * A compiled WebAssembly.Module (structured-cloneable, so it can be posted to worker threads).
 * Opaque here: the build's type set (lib ES2023 + @types/node) does not declare WebAssembly.
 */
export type WasmModule = { readonly [compiledModule]: true };

/** The WebAssembly global, typed as far as this file uses it. */
const wasm = (
  globalThis as unknown as {
    WebAssembly: {
      Module: new (bytes: Uint8Array) => WasmModule;
      Instance: new (module: WasmModule, imports: object) => { exports: unknown };
    };
  }
).WebAssembly;

let compiled: WasmModule | undefined;

/** The compiled module (compiled once per thread). */
export function keccakMinerModule(): WasmModule {
  compiled ??= new wasm.Module(keccakMinerWasm());
  return compiled;
}

export interface KeccakMiner {
  search(l0: bigint, l1: bigint, l2: bigint, l3: bigint, l4: bigint, l5: bigint, l6: bigint, start: bigint, count: number, mask: bigint): number;
  digest(l0: bigint, l1: bigint, l2: bigint, l3: bigint, l4: bigint, l5: bigint, l6: bigint): [bigint, bigint, bigint, bigint];
  head(l0: bigint, l1: bigint, l2: bigint, l3: bigint, l4: bigint, l5: bigint, l6: bigint): bigint;
}

export function instantiateKeccakMiner(module: WasmModule = keccakMinerModule()): KeccakMiner {
  return new wasm.Instance(module, {}).exports as unknown as KeccakMiner;
}

/** Highest nonce the miner searches: the nonce fills the salt's last 8 bytes. */
export const MAX_NONCE = 2n ** 64n - 1n;

/**
 * The seven message lanes of `address || salt` (salt = `saltPrefix` (24 bytes) then 8 zero bytes)
 * with the padding byte, as signed BigInts. Pass a full 32-byte salt to `messageLanes` to hash it
 * as is (digest/head); the miner xors the nonce's bytes into lanes 5 and 6.
 */
export function messageLanes(address: Uint8Array, salt: Uint8Array): bigint[] {
  if (address.length !== 20 || salt.length !== 32) throw new Error('address must be 20 bytes and salt 32 bytes');
  const block = new Uint8Array(56);
  block.set(address, 0);
  block.set(salt, 20);
  block[52] = 0x01;
  const view = new DataView(block.buffer);
  return Array.from({ length: 7 }, (_, i) => view.getBigInt64(8 * i, true));
}

/** Little-endian lanes back to bytes. */
export function lanesToBytes(lanes: readonly bigint[]): Uint8Array {
  const out = new Uint8Array(8 * lanes.length);
  const view = new DataView(out.buffer);
  lanes.forEach((lane, i) => view.setBigUint64(8 * i, BigInt.asUintN(64, lane), true));
  return out;
}
